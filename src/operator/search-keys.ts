import { z } from "zod";
import { defineOperation } from "../framework/operations/define-operation";
import { ApiError } from "../framework/api-error";
import { jsonBody } from "../framework/counted-body";
import { Scope } from "../framework/operations/scopes";
import { callDependency } from "../lib/call-dependency";
import { Plan } from "../limiter/plans";
import { budgetOf, scopesOf, type ApiKeyRecord } from "../keys/api-key-record";
import { idName, type KeySummary } from "../keys/kv-layout";
import { bannedBudgets } from "../limiter/ban-entries";

/** A key expiring within this is `expiring`. */
const EXPIRING_SOON_MS = 7 * 86_400_000;
/** KV pages (1,000 keys each) one search reads at most before it answers with a cursor to go on from. */
const PAGES_A_SEARCH = 5;

/**
 * A key that works is `banned` while its budget is, else `grace` once rotated away (until its expiry), else `expiring`
 * or `live`.
 */
export const KEY_STATES = ["live", "expiring", "grace", "banned", "revoked", "expired"] as const;
type KeyState = (typeof KEY_STATES)[number];

const SearchQuery = z.object({
  q: z.string().max(200).optional().describe("Part of a key's id, name, first characters or budget, in any case"),
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

const FoundKey = z.object({
  id: z.string(),
  name: z.string(),
  start: z.string().nullable(),
  plan: Plan,
  budget: z.string(),
  scopes: z.array(Scope),
  state: z.enum(KEY_STATES),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  bannedUntil: z.string().nullable().describe("When its budget's ban ends; null: not banned"),
});

export function keyState(
  record: Pick<ApiKeyRecord, "revokedAt" | "expiresAt" | "rotatedTo">,
  now: number,
  budgetBanned = false,
): KeyState {
  if (record.revokedAt) return "revoked";
  const left = record.expiresAt ? Date.parse(record.expiresAt) - now : Infinity;
  if (left <= 0) return "expired";
  if (budgetBanned) return "banned";
  if (record.rotatedTo) return "grace";
  return left <= EXPIRING_SOON_MS ? "expiring" : "live";
}

const foundKey = (
  record: ApiKeyRecord,
  now: number,
  banned: ReadonlyMap<string, number>,
): z.infer<typeof FoundKey> => ({
  id: record.id,
  name: record.name,
  start: record.start ?? null,
  plan: record.plan,
  budget: budgetOf(record),
  scopes: [...scopesOf(record)],
  state: keyState(record, now, banned.has(budgetOf(record))),
  bannedUntil: banned.has(budgetOf(record)) ? new Date(banned.get(budgetOf(record))! * 1000).toISOString() : null,
  createdAt: record.createdAt,
  expiresAt: record.expiresAt ?? null,
  revokedAt: record.revokedAt ?? null,
});

/**
 * GET /admin/keys: the keys of every budget, searched and filtered, paged.
 * Read from the `id:` entries' metadata (one KV list call per 1,000 keys,
 * never a read per key); a search reads at most five such pages and answers
 * what it found with a cursor, so it stays within an invocation's limits
 * however many keys there are.
 */
export const searchKeys = defineOperation({
  operator: true,
  tag: "Service",
  stability: "experimental",
  documented: false,
  operationId: "searchKeys",
  method: "get",
  path: "/keys",
  summary: "Find keys of every budget",
  description:
    "By part of an id, name, first characters or budget; by plan, state and scope. Newest listing order is KV's (by " +
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
    const banned = await callDependency("KV", () => bannedBudgets(c.env.API_KEYS, now / 1000));
    let cursor = parsed.data.cursor;
    for (let page = 0; page < PAGES_A_SEARCH && found.length < limit; page++) {
      const listed = await callDependency("KV", () =>
        c.env.API_KEYS.list<KeySummary>({ prefix: idName(""), ...(cursor && { cursor }) }),
      );
      for (const { name, metadata } of listed.keys) {
        if (!metadata) continue;
        const key = foundKey({ id: name.slice(idName("").length), ...metadata }, now, banned);
        if (plan && key.plan !== plan) continue;
        if (state && key.state !== state) continue;
        if (scope && !key.scopes.includes(scope)) continue;
        if (
          needle &&
          ![key.id, key.name, key.start ?? "", key.budget].some((field) => field.toLowerCase().includes(needle))
        )
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
