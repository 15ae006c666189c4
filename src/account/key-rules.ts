/** What an account refuses to do to its keys, whoever asks: plain functions of its rows and a clock. */
import type { Scope } from "../framework/operations/scopes";
import type { PlanChange } from "./account-keys";
import { standingOf, type ApiKeyRecord } from "./key-record";

/** The scope a key needs for its account's webhooks to be delivered: every event holds an order. */
export const WEBHOOK_READER_SCOPE: Scope = "orders:read";

/** What the Worker makes of a new key (the key itself never leaves it): the rest comes from the key it replaces. */
export type NewKey = Pick<ApiKeyRecord, "id" | "start" | "createdAt">;

/** Why a key operation is refused: the key is not live, it was rotated already, or the key that asked may not. */
export type KeyRefusal =
  | { kind: "not_live"; key?: ApiKeyRecord }
  | { kind: "rotated_already"; rotatedTo: string }
  | { kind: "acts_only_on_itself" }
  | { kind: "too_many_keys" }
  | { kind: "invalid"; message: string };

/** A rotation done: the old key and the new, and the keys its account let go to make room (account-keys.ts). */
export type Rotation =
  | { kind: "rotated"; previous: ApiKeyRecord; rotated: ApiKeyRecord; dropped?: string[] }
  | KeyRefusal;

/** A key's own changes, and the account's plan (its limits with it: absent, the plan's). */
export interface KeyUpdate {
  name?: string;
  expiresAt?: string;
  plan?: PlanChange;
}

/**
 * A revocation refused: asked by a key of the account (`asker`, absent for an operator or a scanner) that may act only
 * on itself, of another key: one rotated away (maybe leaked), made to expire, or no longer live.
 */
export function revocationRefusal(
  asker: ApiKeyRecord | undefined,
  askedBy: string | undefined,
  keyId: string,
  now: number,
): KeyRefusal | undefined {
  if (askedBy === undefined || askedBy === keyId) return undefined;
  if (standingOf(asker, now) !== "live" || asker!.rotatedTo !== undefined || asker!.expiresAt !== undefined)
    return { kind: "acts_only_on_itself" };
  return undefined;
}

/** An update done: the key as it is now, and the keys it reached (a plan reaches every live key of the account). */
export type Updated = { kind: "updated"; key: ApiKeyRecord; reached: string[] } | KeyRefusal;

/**
 * A rotation refused: of a key not live or rotated already, or asked by one rotated away (maybe leaked) or made to
 * expire (its new key would outlive it).
 */
export function rotationRefusal(
  key: ApiKeyRecord | undefined,
  asker: ApiKeyRecord | undefined,
  now: number,
): KeyRefusal | undefined {
  if (asker && (standingOf(asker, now) !== "live" || asker.rotatedTo !== undefined))
    return { kind: "acts_only_on_itself" };
  if (asker && asker.id !== key?.id && asker.expiresAt !== undefined) return { kind: "acts_only_on_itself" };
  if (standingOf(key, now) !== "live") return { kind: "not_live", ...(key && { key }) };
  if (key!.rotatedTo !== undefined) return { kind: "rotated_already", rotatedTo: key!.rotatedTo };
  return undefined;
}

/** A rotation: the old key ends with its grace and names the new, which has its name, scopes and expiry. */
export function rotationOf(
  key: ApiKeyRecord | undefined,
  asker: ApiKeyRecord | undefined,
  made: NewKey,
  graceEndsAt: string,
  now: number,
): Rotation {
  const refusal = rotationRefusal(key, asker, now);
  if (refusal) return refusal;
  const { id: _, start: __, createdAt: ___, rotatedTo: ____, ...kept } = key!;
  const expiresAt = key!.expiresAt && key!.expiresAt < graceEndsAt ? key!.expiresAt : graceEndsAt;
  return {
    kind: "rotated",
    previous: { ...key!, expiresAt, rotatedTo: made.id },
    rotated: { ...kept, ...made, budget: key!.budget ?? key!.id },
  };
}

/** An update refused: of a key not live, or an end for a key rotated away (it ends with its grace). */
export function updateRefusal(key: ApiKeyRecord | undefined, update: KeyUpdate, now: number): KeyRefusal | undefined {
  if (standingOf(key, now) !== "live") return { kind: "not_live", ...(key && { key }) };
  if (key!.rotatedTo !== undefined && update.expiresAt !== undefined)
    return {
      kind: "invalid",
      message: `expiresAt: key ${key!.id} was rotated away and ends with its grace. Revoke it to end it sooner.`,
    };
  return undefined;
}
