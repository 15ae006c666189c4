/**
 * What a key may do to its account's other keys and endpoints (docs/api.md#your-own-keys). A key rotated away may only
 * revoke itself: its holder may be whoever leaked it, and endpoints it aimed would outlive it. A key made to expire
 * acts only on itself among keys, so no key outlives the one that asked, but manages endpoints. Decided from the key
 * as its account answered for this request.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../framework/app-env";
import { keyOfCaller } from "../require-api-key";
import { actsOnlyOnItself } from "../key-refusal";

/** Refuses a key rotated away, or made to expire, acting on another key (403 key_acts_only_on_itself). */
export function refuseActingOnAnother(c: Context<AppEnv>, keyId: string): void {
  const caller = keyOfCaller(c);
  if (keyId === caller.id || (caller.rotatedTo === undefined && caller.expiresAt === undefined)) return;
  throw actsOnlyOnItself("another key of its account");
}

/** Refuses a key rotated away changing its account's endpoints (403); reading them stays open. */
export function refuseRotatedAway(c: Context<AppEnv>): void {
  if (keyOfCaller(c).rotatedTo !== undefined) throw actsOnlyOnItself("webhook endpoints");
}
