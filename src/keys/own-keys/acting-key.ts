/**
 * What a key may do to the other keys of its budget (docs/api.md#your-own-keys).
 * A key that was rotated away, or that expires, acts only on itself: its
 * holder may be whoever leaked it, and from such a key a rotation of the new
 * key (with no grace) would hand them a key that never expires and cut the
 * owner's off. No operation then returns a key that outlives the key that
 * asked: a rotation's new key keeps the rotated key's expiry, and the rotated
 * key is the asker itself whenever the asker expires.
 */
import { ApiError } from "../../framework/api-error";
import { CHALLENGE } from "../identify-caller";
import type { ApiKeyRecord } from "../api-key-record";
import { findApiKeyById } from "../lookup";

export const actsOnlyOnItself = (caller: ApiKeyRecord) => caller.expiresAt !== undefined;

/**
 * Refuses an expiring caller acting on another key of its budget (403
 * key_acts_only_on_itself). The caller as KV holds it now, not as the
 * isolate cached it: a rotation a moment ago made it expire.
 */
export async function refuseActingOnAnother(kv: KVNamespace, cached: ApiKeyRecord, keyId: string): Promise<void> {
  if (keyId === cached.id) return;
  const caller = (await findApiKeyById(kv, cached.id))?.record ?? cached;
  if (!actsOnlyOnItself(caller)) return;
  throw new ApiError(
    "key_acts_only_on_itself",
    `This key stops working at ${caller.expiresAt} (it was rotated away, or made to expire): it may act only on itself. Use the key that replaced it.`,
    { "WWW-Authenticate": `${CHALLENGE}, error="insufficient_scope"` },
  );
}
