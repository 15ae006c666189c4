/**
 * What a key rotated away may do to its account's endpoints (docs/api.md#your-own-keys): read them, no more, as its
 * holder may be whoever leaked it and endpoints it aimed would outlive it. Decided from the key as its account
 * answered for this request; what a key may do to the account's other keys, the account decides (key-rules.ts).
 */
import type { Context } from "hono";
import type { AppEnv } from "../../framework/app-env";
import { keyOfCaller } from "../require-api-key";
import { actsOnlyOnItself } from "../key-refusal";

/** Refuses a key rotated away changing its account's endpoints (403); reading them stays open. */
export function refuseRotatedAway(c: Context<AppEnv>): void {
  if (keyOfCaller(c).rotatedTo !== undefined) throw actsOnlyOnItself("webhook endpoints");
}
