import { env } from "cloudflare:workers";
import { putApiKey } from "../src/keys/lookup";
import { generateApiKey, generateKeyId } from "../src/keys/bearer";
import type { ApiKeyRecord, Limits, Plan } from "../src/keys/schemas";

export interface TestKey {
  key: string;
  record: ApiKeyRecord;
}

/** Stores a key in KV exactly as `npm run keys -- create` does. */
export async function storeTestKey(options: { plan?: Plan; limits?: Limits; revokedAt?: string } = {}): Promise<TestKey> {
  const key = generateApiKey("so_test_");
  const record: ApiKeyRecord = {
    id: generateKeyId(),
    plan: options.plan ?? "pro",
    name: "test key",
    createdAt: new Date().toISOString(),
    ...(options.limits && { limits: options.limits }),
    ...(options.revokedAt && { revokedAt: options.revokedAt }),
  };
  await putApiKey(env.API_KEYS, key, record);
  return { key, record };
}

/** The key `api()` sends unless a test says otherwise; a generous plan so it does not trip limits. */
export let defaultKey: TestKey;

export async function storeDefaultKey(): Promise<void> {
  defaultKey = await storeTestKey({ plan: "enterprise", limits: { perMinute: 1_000_000, perDay: 10_000_000 } });
}
