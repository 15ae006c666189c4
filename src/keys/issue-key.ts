/** Issuing API keys: the key, its KV pointer, its row in its account. Web Crypto only: Node and workerd. */
import { accountStub } from "../account/account-stub";
import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import { storeKeyPointer } from "./kv-layout";
import { sha256Hex } from "../lib/digest";
import { callDependency } from "../lib/call-dependency";
import type { Scope } from "../framework/operations/scopes";
import { accountOf, DEFAULT_SCOPES, type ApiKeyRecord } from "../account/key-record";
import type { Limits, Plan } from "../account/plans";
import { BASE62, KEY_RANDOM_LENGTH, keyChecksum } from "./key-format";

/** How much of a key its record keeps to tell it apart: the prefix and 4 of its 32 random characters (24 bits). */
const KEY_START_LENGTH = 12;

export type KeyPrefix = "so_live_" | "so_test_";

/** Production's keys start so_live_, every other deployment's so_test_ (docs/api.md#authentication). */
export const keyPrefixOf = (c: Context<AppEnv>): KeyPrefix =>
  c.get("config").baseUrl === c.get("config").productionBaseUrl ? "so_live_" : "so_test_";

function randomBase62(length: number): string {
  // 62 does not divide 256: reject bytes >= 248 so every character is equally likely.
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** A new key in the current shape (key-format.ts): its prefix, 32 random base62 characters and their checksum. */
export function generateApiKey(prefix: KeyPrefix): string {
  const body = prefix + randomBase62(KEY_RANDOM_LENGTH);
  return body + keyChecksum(body);
}

export function generateKeyId(): string {
  return `key_${randomBase62(16)}`;
}

export interface KeyOptions {
  plan: Plan;
  name: string;
  limits?: Limits;
  scopes?: Scope[];
  expiresAt?: string;
}

/** A new key and its record: the one place a record is made. */
export function newApiKey(prefix: KeyPrefix, options: KeyOptions): { key: string; record: ApiKeyRecord } {
  const key = generateApiKey(prefix);
  const record: ApiKeyRecord = {
    id: generateKeyId(),
    start: key.slice(0, KEY_START_LENGTH),
    plan: options.plan,
    name: options.name,
    createdAt: new Date().toISOString(),
    ...(options.limits && { limits: options.limits }),
    scopes: options.scopes ?? [...DEFAULT_SCOPES],
    ...(options.expiresAt && { expiresAt: options.expiresAt }),
  };
  return { key, record };
}

/** What a new key of an existing account is made of in the Worker: the key itself never leaves it. */
export function newKeyOf(prefix: KeyPrefix): { key: string; made: Pick<ApiKeyRecord, "id" | "start" | "createdAt"> } {
  const key = generateApiKey(prefix);
  return {
    key,
    made: { id: generateKeyId(), start: key.slice(0, KEY_START_LENGTH), createdAt: new Date().toISOString() },
  };
}

/** Stores a new key: KV pointer first (unknown until its account has it), then its account's row (and search entry). */
export async function storeNewKey(env: Pick<Env, "API_KEYS" | "ACCOUNTS">, key: string, record: ApiKeyRecord) {
  await storeKeyPointer(env.API_KEYS, await sha256Hex(key), record);
  await callDependency("account", () => accountStub(env.ACCOUNTS, accountOf(record)).addKey(record));
}
