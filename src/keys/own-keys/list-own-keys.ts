import { defineOperation } from "../../framework/operations/define-operation";
import { jsonBody } from "../../framework/counted-body";
import { callDependency } from "../../lib/dependency";
import { keyOfCaller } from "../require-api-key";
import { ApiKeyRecord, budgetOf } from "../api-key-record";
import { budgetPrefix, idName, type KeySummary } from "../layout";
import { OWN_KEYS, OwnKeys, ownKeyOf } from "./own-key-schemas";

/**
 * The keys of a budget as KV lists them, the calling key always among them
 * (KV's list may not show a key made a moment ago elsewhere).
 */
async function keysOfBudget(kv: KVNamespace, caller: ApiKeyRecord): Promise<ApiKeyRecord[]> {
  const prefix = budgetPrefix(budgetOf(caller));
  const listed = await callDependency("KV", () => kv.list({ prefix }));
  const ids = listed.keys.map(({ name }) => name.slice(prefix.length)).filter((id) => id !== caller.id);
  const others = await Promise.all(
    ids.map(async (id) => {
      const summary = (await callDependency("KV", () => kv.getWithMetadata<KeySummary>(idName(id)))).metadata;
      const parsed = ApiKeyRecord.safeParse({ id, ...summary });
      return parsed.success ? [parsed.data] : [];
    }),
  );
  return [caller, ...others.flat()].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/** GET /v2/keys: the keys of the caller's budget, newest first (a rotated pair while both live). */
export const listOwnKeys = defineOperation({
  ...OWN_KEYS,
  operationId: "listOwnKeys",
  method: "get",
  path: "/keys",
  summary: "List the keys of the caller's budget",
  description:
    "Every key of the calling key's budget, newest first: the key itself and those it was rotated from or to, with their " +
    "state. Never a key itself: only its first 12 characters.",
  responses: { 200: { description: "The budget's keys", body: OwnKeys } },
  errors: [],
  async handle(c) {
    const caller = keyOfCaller(c);
    const now = Date.now();
    return jsonBody(c, { data: (await keysOfBudget(c.env.API_KEYS, caller)).map((record) => ownKeyOf(record, caller.id, now)) });
  },
});
