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

/**
 * The key `api()` sends unless a test says otherwise, a generous plan so it does not trip limits: each test's own, made
 * when the test first needs it (most send keys of their own, and a key is an account's object made).
 */
let defaultKeyOfTest: { made: Promise<TestKey>; key?: TestKey } | undefined;

export function defaultKey(): Promise<TestKey> {
  if (defaultKeyOfTest) return defaultKeyOfTest.made;
  const asked = { made: storeTestKey({ plan: "enterprise", limits: { perMinute: 1_000_000, perDay: 10_000_000 } }) };
  defaultKeyOfTest = asked;
  void asked.made.then((key) => Object.assign(asked, { key }));
  return asked.made;
}

/** The default key already made in this test: for a request that cannot wait for it (await defaultKey() first). */
export function madeDefaultKey(): TestKey {
  const key = defaultKeyOfTest?.key;
  if (!key) throw new Error("No default key yet in this test: await defaultKey() before building the request.");
  return key;
}

/** A new test has no default key until it asks. */
export function forgetDefaultKey(): void {
  defaultKeyOfTest = undefined;
}
