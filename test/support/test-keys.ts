import { env } from "cloudflare:workers";
import { newApiKey, storeNewKey, type KeyOptions } from "../../src/keys/issue-key";
import type { ApiKeyRecord } from "../../src/account/key-record";

export interface TestKey {
  key: string;
  record: ApiKeyRecord;
}

/** What a test may make a key as: a new key's options, or a state it could only reach by operations. */
export type TestKeyOptions = Partial<KeyOptions> & Partial<Pick<ApiKeyRecord, "budget" | "revokedAt" | "rotatedTo">>;

/** Stores a key as the operator API's create does: its pointer in KV, its row in its account. */
export async function storeTestKey(options: TestKeyOptions = {}): Promise<TestKey> {
  const { budget, revokedAt, rotatedTo, ...asked } = options;
  const issued = newApiKey("so_test_", { plan: "pro", name: "test key", ...asked });
  const record: ApiKeyRecord = {
    ...issued.record,
    ...(budget && { budget }),
    ...(revokedAt && { revokedAt, revokedReason: "retired" as const }),
    ...(rotatedTo && { rotatedTo }),
  };
  await storeNewKey(env, issued.key, record);
  return { key: issued.key, record };
}

/** The key `api()` sends unless a test says otherwise; a generous plan so it does not trip limits. */
export let defaultKey: TestKey;

export async function storeDefaultKey(): Promise<void> {
  defaultKey = await storeTestKey({ plan: "enterprise", limits: { perMinute: 1_000_000, perDay: 10_000_000 } });
}
