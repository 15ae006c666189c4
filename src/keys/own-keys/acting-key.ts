/**
 * What a key may do to the other keys of its budget and to its webhook
 * endpoints (docs/api.md#your-own-keys). A key that was rotated away acts
 * only on itself, and of itself may only revoke it: its holder may be whoever leaked it, and from such a key a
 * rotation of the new key (with no grace) would hand them a key that never
 * expires and cut the owner's off, an endpoint made or re-pointed would
 * carry the store's orders to them after the key ends. A key made to expire
 * acts only on itself among keys (no operation returns a key that outlives
 * the key that asked) but keeps managing endpoints.
 *
 * Decided by the budget's Durable Object, which every rotation and
 * revocation tells at once (docs/design/rate-limits.md#key-state), with the
 * record the request was identified by: never by a KV read, which may be a
 * minute old at another location.
 */
import type { Context } from "hono";
import { ApiError } from "../../framework/api-error";
import type { AppEnv } from "../../framework/app-env";
import { callDependency } from "../../lib/call-dependency";
import { CHALLENGE } from "../identify-caller";
import { budgetOf, type ApiKeyRecord } from "../../account/key-record";
import { keyOfCaller } from "../require-api-key";

interface CallerStanding {
  caller: ApiKeyRecord;
  /** Rotated away, as its record or its budget's object says. */
  rotatedAway: boolean;
}

/**
 * The calling key as its budget's object knows it now; a key the object refuses (revoked, or past its grace) is 401
 * here too.
 */
async function standingOfCaller(c: Context<AppEnv>): Promise<CallerStanding> {
  const caller = keyOfCaller(c);
  const standing = await callDependency("rate limiter", () =>
    c.env.ACCOUNTS.getByName(budgetOf(caller)).standing(caller.id),
  );
  if (standing.ended) {
    throw new ApiError("invalid_api_key", "The API key is not valid. Check it, or ask for a new one.", {
      "WWW-Authenticate": `${CHALLENGE}, error="invalid_token"`,
    });
  }
  return { caller, rotatedAway: standing.rotatedAway || caller.rotatedTo !== undefined };
}

const actsOnlyOnItself = (what: string) =>
  new ApiError(
    "key_acts_only_on_itself",
    `This key was rotated away, or made to expire: it may act only on itself, not on ${what}. Use the key that ` +
      `replaced it.`,
    {
      "WWW-Authenticate": `${CHALLENGE}, error="insufficient_scope"`,
    },
  );

/**
 * Refuses a caller rotated away, or made to expire, acting on another key of its budget (403 key_acts_only_on_itself).
 */
export async function refuseActingOnAnother(c: Context<AppEnv>, keyId: string): Promise<void> {
  const { caller, rotatedAway } = await standingOfCaller(c);
  if (keyId === caller.id || (!rotatedAway && caller.expiresAt === undefined)) return;
  throw actsOnlyOnItself("another key of its budget");
}

/**
 * Refuses a rotation asked by a caller that may not make a key: one rotated away (even of itself: the new key
 * would not be rotated away, and could plant what the rotated key may not), or one made to expire rotating
 * another key (403 key_acts_only_on_itself). A key made to expire rotates itself into a key that ends with it.
 */
export async function refuseRotatingFrom(c: Context<AppEnv>, keyId: string): Promise<void> {
  const { caller, rotatedAway } = await standingOfCaller(c);
  if (rotatedAway) throw actsOnlyOnItself("any key, itself included: it may only revoke itself");
  if (keyId !== caller.id && caller.expiresAt !== undefined) throw actsOnlyOnItself("another key of its budget");
}

/**
 * Refuses a caller rotated away changing its budget's webhook endpoints (403 key_acts_only_on_itself): reading them
 * stays open.
 */
export async function refuseRotatedAway(c: Context<AppEnv>): Promise<void> {
  if ((await standingOfCaller(c)).rotatedAway) throw actsOnlyOnItself("webhook endpoints");
}
