import { z } from "zod";
import { Scope } from "../framework/operations/scopes";
import { Limits, PLAN_LIMITS, Plan } from "./plans";

/** An instant as the keys command writes it; anything else would compare as NaN, and a NaN expiry never comes. */
const Instant = z.iso.datetime({ offset: true });

/** Why a key was revoked: leaked, so what it started ends with it (docs/api.md#what-a-leak-ends); or retired. */
export const RevocationReason = z.enum(["leaked", "retired"]);
export type RevocationReason = z.infer<typeof RevocationReason>;

/** A key's id: `key_` and 16 letters and digits. */
export const KeyId = z.string().regex(/^key_[0-9A-Za-z]{16}$/);
/** A key's id in a path (`/keys/{keyId}/...`), the owner's operations and the operator's alike. */
export const KeyIdParams = z.object({ keyId: KeyId });

/**
 * A key as its account knows it, never the key itself (its SHA-256 names its KV pointer); plan and limits are the
 * account's.
 */
export const ApiKeyRecord = z
  .object({
    id: KeyId,
    /** The key's first 12 characters, so its holder can tell keys apart. */
    start: z.string().regex(/^so_(live|test)_[0-9A-Za-z]{4}$/),
    plan: Plan,
    name: z.string(),
    createdAt: Instant,
    limits: Limits.optional(),
    /** What it may do (docs/api.md#authentication). */
    scopes: z.array(Scope),
    /** From then on the key answers 401. */
    expiresAt: Instant.optional(),
    /** Set on a key made by rotation: the account it shares (named after the account's first key). */
    budget: z.string().optional(),
    /** On a key rotated away: the key that replaced it; it works until expiresAt, its grace. */
    rotatedTo: z.string().optional(),
    revokedAt: Instant.optional(),
    /** Set with revokedAt, always (revoked()): `leaked` ended what it started. */
    revokedReason: RevocationReason.optional(),
    /** Set once a revocation as leaked has ended all the key started: until then, asking again ends it again. */
    leakEndedAt: Instant.optional(),
  })
  .refine((key) => (key.revokedAt === undefined) === (key.revokedReason === undefined), {
    message: "revokedAt and revokedReason are set together",
  });
export type ApiKeyRecord = z.infer<typeof ApiKeyRecord>;

/** What a key may do unless it asks for more (`--scopes`). */
export const DEFAULT_SCOPES: readonly Scope[] = ["orders:read", "orders:write"];

/** The key's account: a rotated key and the key it replaced share one. */
export const accountOf = (record: Pick<ApiKeyRecord, "id" | "budget">): string => record.budget ?? record.id;

/** A key's own limits when it has them (enterprise, or an override), else its plan's (the limiter's table). */
export function limitsFor(key: Pick<ApiKeyRecord, "id" | "plan" | "limits">): Limits {
  if (key.limits) return key.limits;
  if (key.plan === "enterprise") throw new Error(`enterprise key ${key.id} has no limits`);
  return PLAN_LIMITS[key.plan];
}

/** Whether a key may be used now: not revoked, not expired. */
export const isUsable = (key: ApiKeyRecord, now = Date.now()): boolean =>
  key.revokedAt === undefined && (key.expiresAt === undefined || Date.parse(key.expiresAt) > now);

/** A key's standing as its account decides it now; revoked and expired never become live again. */
export type KeyStanding = "live" | "not_found" | "revoked" | "expired";

export function standingOf(key: ApiKeyRecord | undefined, now: number): KeyStanding {
  if (!key) return "not_found";
  if (key.revokedAt !== undefined) return "revoked";
  return isUsable(key, now) ? "live" : "expired";
}

/** A revocation as the account records it: the first time and reason stay, but a retired key found leaked says so. */
export function revoked(key: ApiKeyRecord, asked: RevocationReason, at: string): ApiKeyRecord {
  const leaking = asked === "leaked" && key.leakEndedAt === undefined;
  const reason = leaking ? "leaked" : (key.revokedReason ?? asked);
  return { ...key, revokedAt: key.revokedAt ?? at, revokedReason: reason };
}
