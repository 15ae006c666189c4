/**
 * Revoking a key, by whoever asks (its budget's own keys, an operator, the
 * keys command through the operator API, GitHub's secret scanning): its
 * record revoked in KV, its budget's object told (every isolate refuses it
 * within a lease's length), audited with why. A key revoked as leaked ends
 * what it started (docs/api.md#what-a-leak-ends): whoever held it may act
 * before its owner, so every webhook endpoint it made or last aimed is
 * disabled, and its console sessions and links end; the keys it made by
 * rotation are named in its audit for the owner to rotate, never revoked
 * silently.
 */
import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../framework/app-env";
import { callDependency } from "../lib/call-dependency";
import { budgetOf, type ApiKeyRecord } from "../account/key-record";
import { addKeyEventChanges, auditedKeyOperation } from "../keys/audited-key-operation";
import { OperationNotTaken } from "../keys/audit";
import { storeKeyRecord } from "../keys/kv-layout";
import type { Usage } from "../account/policy";
import { endEverySessionOfKey } from "../console/console-sessions";
import { disableForLeak } from "../webhook-delivery/endpoint-table";
import { auditedEndpointChange } from "../webhook-delivery/endpoint-audit-rows";
import { endpointsStartedBy, type EndpointAuditRow } from "./endpoints-a-key-started";

export const RevocationReason = z
  .enum(["leaked", "retired"])
  .describe(
    "leaked: it may be in someone else's hands, so what it started ends with it (webhook endpoints, console " +
      "sessions); retired (the default): it is no longer used",
  );
export type RevocationReason = z.infer<typeof RevocationReason>;

/** What a revocation is asked with: why, who asks, and where a scanner found the key. */
export interface RevocationAsked {
  reason: RevocationReason;
  /** As audits name who did it: `key:<id>`, an operator's name, `github-secret-scanning`. */
  actor: string;
  found?: { url?: string; source?: string };
  /**
   * Audit a call on a key revoked already too (the operator API: every operator's action is in the audit, a repeat that
   * finishes a revocation included).
   */
  auditRepeat?: boolean;
}

/** What a revocation as leaked ended. */
export interface LeakEnded {
  endpointsDisabled: string[];
  /** Keys the leaked key made by rotation: still working, for their owner to rotate. */
  rotatedInto: string[];
  sessionsEnded: number;
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
 * Revokes a stored key, or finishes a revocation that did not reach its budget's object (asked again). A key
 * revoked already as retired and now reported leaked has its leak ended then: a leak found late still ends.
 * In order: the record revoked, then the budget's object told (from then on no request of the key changes an
 * endpoint or a key: each asks the object), then what the key started is chosen and ended, then the audit
 * row says what ended, and last the record says when the leak ended (`leakEndedAt`). A revocation that fails
 * part way keeps its row marked unknown, and asking again (its owner, an operator, GitHub sending its report
 * again) ends the leak again until the record says it has ended.
 */
export async function revokeKey(
  c: Context<AppEnv>,
  stored: { hash: string; record: ApiKeyRecord },
  asked: RevocationAsked,
): Promise<Revocation> {
  const { hash, record } = stored;
  const { DB: db, API_KEYS: kv } = c.env;
  const budget = budgetOf(record);
  const leaking = asked.reason === "leaked" && record.leakEndedAt === undefined;
  const revokedAt = record.revokedAt ?? new Date().toISOString();
  const reason: RevocationReason = leaking
    ? "leaked"
    : record.revokedAt
      ? (record.revokedReason ?? "retired")
      : asked.reason;
  const tellObject = () => callDependency("rate limiter", () => c.env.ACCOUNTS.getByName(budget).revoke(record.id));
  let usage: Usage;
  let leak: LeakEnded | undefined;
  if (record.revokedAt && !leaking) {
    const repeat = {
      operation: "revoke" as const,
      keyId: record.id,
      changes: { revokedAt, reason, budget },
      actor: asked.actor,
    };
    usage = asked.auditRepeat ? await auditedKeyOperation(db, repeat, tellObject) : await tellObject();
  } else {
    const found = asked.found && {
      ...(asked.found.url && { foundAt: asked.found.url.slice(0, MAX_FOUND_URL) }),
      ...(asked.found.source && { source: asked.found.source.slice(0, 64) }),
    };
    const changes = { revokedAt, reason, budget, ...(leaking && { leakedAt: new Date().toISOString(), ...found }) };
    usage = await auditedKeyOperation(
      db,
      { operation: "revoke", keyId: record.id, changes, actor: asked.actor },
      async (rowId) => {
        if (!record.revokedAt || record.revokedReason !== reason)
          await storeKeyRecord(kv, hash, { ...record, revokedAt, revokedReason: reason });
        const told = await tellObject();
        if (leaking) {
          leak = await endWhatTheKeyStarted(db, record, asked.actor);
          const leakEndedAt = new Date().toISOString();
          await addKeyEventChanges(db, rowId, {
            leakEndedAt,
            endpointsDisabled: leak.endpointsDisabled,
            rotatedInto: leak.rotatedInto,
          });
          await storeKeyRecord(kv, hash, { ...record, revokedAt, revokedReason: "leaked", leakEndedAt });
        }
        return told;
      },
    );
  }
  c.set("revocation", { budget, revoked: usage.revoked });
  return { revokedAt, reason, usage, ...(leak && { leak }) };
}

/**
 * The keys a key made by rotation, and those they made, as the key audit says (a few levels at most in practice;
 * bounded).
 */
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

/** The budget's endpoints that any of `keyIds` started, as their audit says. */
async function endpointsStartedByAny(db: D1Database, budget: string, keyIds: readonly string[]): Promise<string[]> {
  const { results } = await callDependency("D1", () =>
    db
      .prepare(
        "SELECT endpoint_id, operation, changes, actor FROM webhook_endpoint_events WHERE endpoint_id IN (SELECT id " +
          "FROM webhook_endpoints WHERE budget = ?1) " +
          "AND operation IN ('create', 'update', 'rotate_secret') ORDER BY id",
      )
      .bind(budget)
      .all<EndpointAuditRow>(),
  );
  return [...new Set(keyIds.flatMap((keyId) => endpointsStartedBy(results, keyId)))];
}

/**
 * Disables every endpoint the key, or a key it made, started (each audited as the service's disabling), twice
 * over: a change the key made just before its object was told may land after the first look. Then its console
 * sessions and links end.
 */
async function endWhatTheKeyStarted(db: D1Database, record: ApiKeyRecord, actor: string): Promise<LeakEnded> {
  const at = new Date().toISOString();
  const rotatedInto = await keysMadeBy(db, record.id);
  const reason =
    `the key ${record.id}, which made it or last changed its URL, secret or ` +
    `types${rotatedInto.length > 0 ? " (itself or a key it made)" : ""}, was revoked as leaked at ${at}`;
  const disabled: string[] = [];
  for (let look = 0; look < 2; look++) {
    for (const endpointId of await endpointsStartedByAny(db, budgetOf(record), [record.id, ...rotatedInto])) {
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
  const { sessions } = await callDependency("D1", () => endEverySessionOfKey(db, record.id, at));
  return { endpointsDisabled: disabled, rotatedInto, sessionsEnded: sessions };
}
