import { limitsSetAtOf, type ApiKeyRecord, type Limits, type Plan } from "../keys/api-key-record";

/** The one table of plan limits (docs/api.md#rate-limits). Enterprise limits come from each key. */
export const PLAN_LIMITS: Record<Exclude<Plan, "enterprise">, Limits> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
};

/**
 * When PLAN_LIMITS last changed (Unix ms); change it with the table. A budget's
 * object keeps the newest limits it has been shown, by stamp, so limits
 * from the table are stamped no older than this: a change to the table reaches
 * every budget on a plan within a lease, not at the end of the day
 * (docs/design/rate-limits.md#leases). test/workers/limiter/limiter-policy.test.ts
 * pins the table to this revision.
 */
export const PLAN_LIMITS_REVISED_AT = Date.parse("2026-11-24T00:00:00Z");

/** Callers without a valid key are limited per address like a free key. */
export const ANONYMOUS_LIMITS = PLAN_LIMITS.free;

/** A key's own limits when it has them (enterprise, or an override), else its plan's. */
export function limitsFor(key: ApiKeyRecord): Limits {
  if (key.limits) return key.limits;
  if (key.plan === "enterprise") throw new Error(`enterprise key ${key.id} has no limits`);
  return PLAN_LIMITS[key.plan];
}

/** The stamp of the limits limitsFor() gives, Unix ms: the record's, and no older than the plan table when they come from it. */
export function limitsStampOf(key: ApiKeyRecord): number {
  const setAt = limitsSetAtOf(key);
  return key.limits ? setAt : Math.max(setAt, PLAN_LIMITS_REVISED_AT);
}
