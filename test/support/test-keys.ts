import { env } from "cloudflare:workers";
import { newApiKey, putApiKey, type KeyOptions } from "../../src/keys/issue-key";
import type { ApiKeyRecord } from "../../src/account/key-record";

export interface TestKey {
  key: string;
  record: ApiKeyRecord;
}

/** Stores a key in KV exactly as `npm run keys -- create` does. */
export async function storeTestKey(options: Partial<KeyOptions> = {}): Promise<TestKey> {
  const issued = newApiKey("so_test_", { plan: "pro", name: "test key", ...options });
  await putApiKey(env.API_KEYS, issued.key, issued.record);
  return issued;
}

/** The key `api()` sends unless a test says otherwise; a generous plan so it does not trip limits. */
export let defaultKey: TestKey;

export async function storeDefaultKey(): Promise<void> {
  defaultKey = await storeTestKey({ plan: "enterprise", limits: { perMinute: 1_000_000, perDay: 10_000_000 } });
}
