/** What a key's revocation as leaked ended, read back from the key audit, for both consoles' key lists. */
import { callDependency } from "../lib/call-dependency";
import type { ApiKeyRecord } from "../account/key-record";

/** What the audit says a key's revocation as leaked ended (docs/api.md#what-a-leak-ends). */
export interface LeakOfKey {
  leakedAt: string;
  foundAt: string | null;
  source: string | null;
  endpointsDisabled: string[];
  rotatedInto: string[];
}

/** What each leaked key's finished revocation ended: one query, none without leaked keys. */
export async function leaksOf(db: D1Database, records: readonly ApiKeyRecord[]): Promise<Map<string, LeakOfKey>> {
  const leaked = records.filter((record) => record.revokedReason === "leaked").map((record) => record.id);
  if (leaked.length === 0) return new Map();
  const { results } = await callDependency("D1", () =>
    db
      .prepare(
        "SELECT key_id, changes FROM key_events WHERE key_id IN (SELECT value FROM json_each(?1)) AND operation = " +
          "'revoke' AND outcome IS NULL " +
          "AND changes ->> '$.leakEndedAt' IS NOT NULL ORDER BY id",
      )
      .bind(JSON.stringify(leaked))
      .all<{ key_id: string; changes: string }>(),
  );
  return new Map(
    results.map(({ key_id, changes }) => {
      const leak = JSON.parse(changes) as {
        leakedAt: string;
        foundAt?: string;
        source?: string;
        endpointsDisabled?: string[];
        rotatedInto?: string[];
      };
      return [
        key_id,
        {
          leakedAt: leak.leakedAt,
          foundAt: leak.foundAt ?? null,
          source: leak.source ?? null,
          endpointsDisabled: leak.endpointsDisabled ?? [],
          rotatedInto: leak.rotatedInto ?? [],
        },
      ];
    }),
  );
}

/** The leaked key that made `keyId` by rotation, if one did. */
export const leakedMakerOf = (keyId: string, leaks: ReadonlyMap<string, LeakOfKey>): string | null =>
  [...leaks].find(([, leak]) => leak.rotatedInto.includes(keyId))?.[0] ?? null;
