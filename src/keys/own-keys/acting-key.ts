/**
 * What a key may do to the other keys of its account and to its webhook
 * endpoints (docs/api.md#your-own-keys). A key that was rotated away acts
 * only on itself, and of itself may only revoke it: its holder may be whoever
 * leaked it, and from such a key an endpoint made or re-pointed would carry
 * the store's orders to them after the key ends. A key made to expire acts
 * only on itself among keys (no operation returns a key that outlives the
 * key that asked) but keeps managing endpoints.
 *
 * Decided from the calling key as its account answered it for this request
 * (account/rate-limit.ts), never from a copy of KV; a rotation is decided
 * again by the account itself, in the same step that does it.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../framework/app-env";
import { keyOfCaller } from "../require-api-key";
import { actsOnlyOnItself } from "../key-refusal";

/**
 * Refuses a caller rotated away, or made to expire, acting on another key of its account (403
 * key_acts_only_on_itself).
 */
export function refuseActingOnAnother(c: Context<AppEnv>, keyId: string): void {
  const caller = keyOfCaller(c);
  if (keyId === caller.id || (caller.rotatedTo === undefined && caller.expiresAt === undefined)) return;
  throw actsOnlyOnItself("another key of its account");
}

/**
 * Refuses a caller rotated away changing its account's webhook endpoints (403 key_acts_only_on_itself): reading
 * them stays open.
 */
export function refuseRotatedAway(c: Context<AppEnv>): void {
  if (keyOfCaller(c).rotatedTo !== undefined) throw actsOnlyOnItself("webhook endpoints");
}
