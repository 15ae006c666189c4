/**
 * Revoking a key, whoever asks: revoked in its account (every isolate refuses it within a lease), audited with why. A
 * key revoked as leaked ends what it started (docs/api.md#what-a-leak-ends), since its holder may act before its owner:
 * the endpoints it made or aimed are disabled, and the keys it made by rotation are named for the owner to rotate. Its
 * console sessions and links need nothing here: each use asks its account, which refuses a revoked key.
 */
import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import { callDependency } from "../lib/call-dependency";
import { accountOf, revoked, RevocationReason as KeyRevocationReason, type ApiKeyRecord } from "../account/key-record";
import { accountStub, forgetKey } from "../account/account-stub";
import { addKeyEventChanges, auditedKeyOperation } from "../keys/audit";
import { OperationNotTaken } from "../lib/audit-row";
import type { KeyRefusal } from "../account/key-rules";
import type { Usage } from "../account/policy";
import { disableForLeak } from "../webhook-delivery/endpoint-table";
import { auditedEndpointChange } from "../webhook-delivery/endpoint-audit-rows";

export const RevocationReason = KeyRevocationReason.describe(
  "leaked: it may be in someone else's hands, so what it started ends with it (the webhook endpoints it made " +
    "or aimed); retired (the default): it is no longer used",
);
export type RevocationReason = KeyRevocationReason;

/** What a revocation is asked with: why, who asks, and where a scanner found the key. */
export interface RevocationAsked {
  reason: RevocationReason;
  /** As audits name who did it (KeyEvent's actor). */
  actor: string;
  found?: { url?: string; source?: string };
  /** The key of the account that asks, if one does, and how its caller answers the account's refusal of it. */
  asker?: { id: string; refused(refusal: KeyRefusal): Error };
  /** Audit a call on a key revoked already too (the operator API audits every action, a finishing repeat included). */
  auditRepeat?: boolean;
}

/** What a revocation as leaked ended. */
export interface LeakEnded {
  endpointsDisabled: string[];
  /** Keys the leaked key made by rotation: still working, for their owner to rotate. */
  rotatedInto: string[];
}

export interface Revocation {
  revokedAt: string;
  reason: RevocationReason;
  usage: Usage;
  /** Set when this revocation was the one that ended a leaked key's work. */
  leak?: LeakEnded;
}

/** How many generations of keys made by rotation a leak's ending follows. */
const MAX_ROTATION_DEPTH = 8;
/** The longest URL of a finding kept in the audit: a leak's place, not a payload. */
const MAX_FOUND_URL = 2_048;

/**
 * Revokes a key, or finishes a leak's revocation that did not finish; a leak found after a retirement still ends. In
 * order: the audit row, the key revoked in its account, what it started ended, the audit row completed, and the account
 * told the leak ended. One that fails part way is done again when asked again, until the account says it ended.
 */
export async function revokeKey(c: Context<AppEnv>, record: ApiKeyRecord, asked: RevocationAsked): Promise<Revocation> {
  const db = c.env.DB;
  const account = accountOf(record);
  const stub = accountStub(c.env.ACCOUNTS, account);
  const leaking = asked.reason === "leaked" && record.leakEndedAt === undefined;
  // The account keeps a revoked key's first time and reason; this is what it will hold.
  const expected = revoked(record, asked.reason, new Date().toISOString());
  const { revokedAt, revokedReason: reason } = expected as Required<Pick<ApiKeyRecord, "revokedAt" | "revokedReason">>;
  let kept: ApiKeyRecord | undefined;
  const revoke = async () => {
    const done = await callDependency("account", () =>
      stub.revokeKey(record.id, asked.reason, revokedAt, asked.asker?.id),
    );
    if (!done) throw new OperationNotTaken("no such key");
    if ("kind" in done) throw asked.asker!.refused(done);
    forgetKey(c, done.after);
    kept = done.after;
  };
  let leak: LeakEnded | undefined;
  if (record.revokedAt && !leaking) {
    const repeat = {
      operation: "revoke" as const,
      keyId: record.id,
      changes: { revokedAt, reason, budget: account },
      actor: asked.actor,
    };
    if (asked.auditRepeat) await auditedKeyOperation(db, repeat, revoke);
    else await revoke();
  } else {
    const found = asked.found && {
      ...(asked.found.url && { foundAt: asked.found.url.slice(0, MAX_FOUND_URL) }),
      ...(asked.found.source && { source: asked.found.source.slice(0, 64) }),
    };
    const changes = {
      revokedAt,
      reason,
      budget: account,
      ...(leaking && { leakedAt: new Date().toISOString(), ...found }),
    };
    await auditedKeyOperation(
      db,
      { operation: "revoke", keyId: record.id, changes, actor: asked.actor },
      async (rowId) => {
        await revoke();
        // Another revocation landed first: the row says what the account kept, as the answer does.
        if (kept && (kept.revokedAt !== revokedAt || kept.revokedReason !== reason))
          await addKeyEventChanges(db, rowId, { revokedAt: kept.revokedAt, reason: kept.revokedReason });
        if (!leaking) return;
        leak = await endWhatTheKeyStarted(db, record, asked.actor);
        const leakEndedAt = new Date().toISOString();
        await addKeyEventChanges(db, rowId, {
          leakEndedAt,
          endpointsDisabled: leak.endpointsDisabled,
          rotatedInto: leak.rotatedInto,
        });
        await callDependency("account", () => stub.endLeak(record.id, leakEndedAt));
      },
    );
  }
  const usage = await callDependency("account", () => stub.usage());
  return {
    revokedAt: kept?.revokedAt ?? revokedAt,
    reason: kept?.revokedReason ?? reason,
    usage,
    ...(leak && { leak }),
  };
}

/** The keys a key made by rotation, and theirs, as the key audit says (bounded depth). */
async function keysMadeBy(db: D1Database, keyId: string): Promise<string[]> {
  const made: string[] = [];
  let makers = [keyId];
  for (let depth = 0; depth < MAX_ROTATION_DEPTH && makers.length > 0; depth++) {
    const { results } = await callDependency("D1", () =>
      db
        .prepare(
          "SELECT key_id FROM key_events WHERE actor IN (SELECT 'key:' || value FROM json_each(?1)) AND operation = " +
            "'create' ORDER BY id",
        )
        .bind(JSON.stringify(makers))
        .all<{ key_id: string }>(),
    );
    makers = results.map((row) => row.key_id).filter((id) => id !== keyId && !made.includes(id));
    made.push(...makers);
  }
  return made;
}

/** The account's endpoints any of `keyIds` made or last aimed, as each row keeps it. */
async function endpointsStartedByAny(db: D1Database, account: string, keyIds: readonly string[]): Promise<string[]> {
  const { results } = await callDependency("D1", () =>
    db
      .prepare(
        "WITH keys AS (SELECT value AS id FROM json_each(?2)) SELECT id FROM webhook_endpoints WHERE budget = ?1 " +
          "AND (url_set_by IN keys OR secret_set_by IN keys OR types_set_by IN keys) ORDER BY created_at, id",
      )
      .bind(account, JSON.stringify(keyIds))
      .all<{ id: string }>(),
  );
  return results.map((row) => row.id);
}

/** Disables every endpoint the key or its rotations started, twice over (a change just before may land after). */
async function endWhatTheKeyStarted(db: D1Database, record: ApiKeyRecord, actor: string): Promise<LeakEnded> {
  const at = new Date().toISOString();
  const rotatedInto = await keysMadeBy(db, record.id);
  const reason =
    `the key ${record.id}, which made it or last changed its URL, secret or ` +
    `types${rotatedInto.length > 0 ? " (itself or a key it made)" : ""}, was revoked as leaked at ${at}`;
  const disabled: string[] = [];
  for (let look = 0; look < 2; look++) {
    for (const endpointId of await endpointsStartedByAny(db, accountOf(record), [record.id, ...rotatedInto])) {
      if (disabled.includes(endpointId)) continue;
      try {
        await auditedEndpointChange(
          db,
          { endpointId, operation: "disable", changes: { leakedKey: record.id }, actor, at },
          async () => {
            if (!(await callDependency("D1", () => disableForLeak(db, endpointId, record.id, reason, at))))
              throw new OperationNotTaken("no such endpoint");
          },
        );
        disabled.push(endpointId);
      } catch (error) {
        // Deleted meanwhile: nothing to disable, and no audit row stays for it.
        if (!(error instanceof OperationNotTaken)) throw error;
      }
    }
  }
  return { endpointsDisabled: disabled, rotatedInto };
}
