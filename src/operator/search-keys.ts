import { z } from "zod";
import { defineOperation } from "../framework/operations/define-operation";
import { ApiError } from "../framework/api-error";
import { jsonBody } from "../framework/counted-body";
import { Scope } from "../framework/operations/scopes";
import { callDependency } from "../lib/call-dependency";
import { Plan } from "../account/plans";
import { accountOf, type ApiKeyRecord } from "../account/key-record";
import { idName, keysOfEntries, type KeySummary } from "../account/key-search-entries";
import { bannedAccounts } from "../account/ban-entries";
import { AdminKey, adminKeyOf, KEY_STATES } from "./admin-key";

/** KV pages (1,000 keys each) one search reads at most before it answers with a cursor to go on from. */
const PAGES_A_SEARCH = 5;

const SearchQuery = z.object({
  q: z.string().max(200).optional().describe("Part of a key's id, name, first characters or account, in any case"),
  plan: Plan.optional(),
  state: z.enum(KEY_STATES).optional(),
  scope: Scope.optional(),
  cursor: z.string().max(1_000).optional().describe("Where the last page stopped (its nextCursor)"),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(50)
    .describe(
      "Keys wanted: no further KV page is read once this many are found (the last page read is answered whole)",
    ),
});

const FoundKey = AdminKey.pick({
  id: true,
  name: true,
  start: true,
  plan: true,
  budget: true,
  scopes: true,
  state: true,
  createdAt: true,
  expiresAt: true,
  revokedAt: true,
}).extend({ bannedUntil: z.string().nullable().describe("When its account's ban ends; null: not banned") });

function foundKey(record: ApiKeyRecord, now: number, banned: ReadonlyMap<string, number>): z.infer<typeof FoundKey> {
  const bannedUntil = banned.get(accountOf(record));
  const { id, name, start, plan, budget, scopes, state, createdAt, expiresAt, revokedAt } = adminKeyOf(
    record,
    now,
    bannedUntil !== undefined,
  );
  return {
    ...{ id, name, start, plan, budget, scopes, state, createdAt, expiresAt, revokedAt },
    bannedUntil: bannedUntil === undefined ? null : new Date(bannedUntil * 1000).toISOString(),
  };
}

/** GET /admin/keys: every account's keys, paged from KV's `id:` metadata, within an invocation's limits. */
export const searchKeys = defineOperation({
  operator: true,
  tag: "Service",
  stability: "experimental",
  documented: false,
  operationId: "searchKeys",
  method: "get",
  path: "/keys",
  summary: "Find keys of every account",
  description:
    "By part of an id, name, first characters or account; by plan, state and scope. Newest listing order is KV's (by " +
    "id). Never a key itself.",
  responses: {
    200: {
      description: "A page of keys",
      body: z.object({ data: z.array(FoundKey), nextCursor: z.string().nullable() }),
    },
  },
  errors: ["invalid_query"],
  async handle(c) {
    const parsed = SearchQuery.safeParse(Object.fromEntries(new URL(c.req.url).searchParams));
    if (!parsed.success)
      throw new ApiError(
        "invalid_query",
        `Invalid search: ${parsed.error.issues
          .map((issue) => `${issue.path.join(".")}: ${issue.message}`)
          .join("; ")}.`,
      );
    const { q, plan, state, scope, limit } = parsed.data;
    const needle = q?.trim().toLowerCase();
    const now = Date.now();
    const found: z.infer<typeof FoundKey>[] = [];
    const banned = await callDependency("KV", () => bannedAccounts(c.env.API_KEYS, now / 1000));
    let cursor = parsed.data.cursor;
    for (let page = 0; page < PAGES_A_SEARCH && found.length < limit; page++) {
      const listed = await callDependency("KV", () =>
        c.env.API_KEYS.list<KeySummary>({ prefix: idName(""), ...(cursor && { cursor }) }),
      );
      for (const record of await keysOfEntries(c.env.API_KEYS, listed.keys)) {
        const key = foundKey(record, now, banned);
        if (plan && key.plan !== plan) continue;
        if (state && key.state !== state) continue;
        if (scope && !key.scopes.includes(scope)) continue;
        if (needle && ![key.id, key.name, key.start, key.budget].some((field) => field.toLowerCase().includes(needle)))
          continue;
        found.push(key);
      }
      cursor = listed.list_complete ? undefined : listed.cursor;
      if (!cursor) break;
    }
    // Every match of the KV pages read, so the next page (after the last of them) misses none.
    return jsonBody(c, { data: found, nextCursor: cursor ?? null }, 200, { "Cache-Control": "no-store" });
  },
});
