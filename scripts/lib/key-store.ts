/**
 * API keys written straight into the local state before `npm start`'s runtime
 * serves it (the demo key, the stress run's keys), through the one local
 * runtime that prepares the state (local-state.ts), with their audit rows.
 * Once the service runs, keys are made through its operator API
 * (`npm run keys`): never two runtimes on the same files.
 */
import { userInfo } from "node:os";
import {
  DELETE_KEY_EVENT,
  INSERT_KEY_EVENT,
  MARK_KEY_EVENT_UNKNOWN,
  keyEventValues,
  withAuditRow,
} from "../../src/keys/audit";
import { recordName, keyEntries } from "../../src/keys/kv-layout";
import { sha256Hex } from "../../src/lib/digest";
import { ApiKeyRecord } from "../../src/account/key-record";
import { newApiKey, type KeyOptions } from "../../src/keys/issue-key";
import type { LocalState } from "./local-state";

/** Who made the keys, for the audit. */
const ACTOR = `cli:${userInfo().username}`;

export interface KeyStore {
  /** The record a key is stored under, or null. */
  recordOf(key: string): Promise<ApiKeyRecord | null>;
  /** Makes a new key, stores only its hash, audits its creation, and returns the key: the one time it is ever seen. */
  issueKey(options: KeyOptions): Promise<{ key: string; record: ApiKeyRecord }>;
  close(): Promise<void>;
}

/** The keys of the local state; closing the store closes the state. */
export function localKeyStore(state: LocalState): KeyStore {
  const { API_KEYS: kv, DB: db } = state.env;
  return {
    async recordOf(key) {
      const stored = await kv.get(recordName(await sha256Hex(key)));
      return stored === null ? null : ApiKeyRecord.parse(JSON.parse(stored));
    },
    async issueKey(options) {
      const { key, record } = newApiKey("so_test_", options);
      const { name, plan, limits, scopes, expiresAt } = record;
      const changes = {
        plan,
        name,
        ...(limits && { limits }),
        ...(scopes && { scopes }),
        ...(expiresAt && { expiresAt }),
      };
      const row = keyEventValues({
        id: crypto.randomUUID(),
        at: new Date().toISOString(),
        operation: "create",
        keyId: record.id,
        changes,
        actor: ACTOR,
      });
      await withAuditRow(
        async () =>
          (await db
            .prepare(INSERT_KEY_EVENT)
            .bind(...row)
            .first<number>("id"))!,
        {
          remove: (rowId) => db.prepare(DELETE_KEY_EVENT).bind(rowId).run(),
          markUnknown: (rowId) => db.prepare(MARK_KEY_EVENT_UNKNOWN).bind(rowId).run(),
        },
        async () => {
          for (const entry of keyEntries(await sha256Hex(key), record))
            await kv.put(entry.key, entry.value, entry.metadata && { metadata: entry.metadata });
        },
      );
      return { key, record };
    },
    close: () => state.dispose(),
  };
}
