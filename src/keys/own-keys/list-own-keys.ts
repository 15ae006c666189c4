import { defineOperation } from "../../framework/operations/define-operation";
import { jsonBody } from "../../framework/counted-body";
import { keyOfCaller } from "../caller";
import { accountOf } from "../../account/key-record";
import { accountKeysPage, MAX_KEYS_PAGE } from "../account-key-pages";
import { documentedParameters, plainWholeNumber, strictQuery } from "../../framework/operations/strict-query";
import { CURSOR_PATTERN, readCursor, makeCursor } from "../../lib/opaque-cursor";
import { OWN_KEYS, OwnKeys, ownKeyOf } from "./own-key-schemas";
import { leaksOf } from "../leaked-key-audit";

const PARAMETERS = {
  limit: `a whole number from 1 to ${MAX_KEYS_PAGE} (default ${MAX_KEYS_PAGE}): keys a page`,
  cursor: "the nextCursor of the page before",
} as const;
const QUERY_SCHEMAS = {
  limit: { type: "integer", minimum: 1, maximum: MAX_KEYS_PAGE, default: MAX_KEYS_PAGE },
  cursor: { type: "string", pattern: CURSOR_PATTERN },
};
const CURSOR_PURPOSE = "own-keys";

/** GET /v2/keys: the keys of the caller's account, as the account has them, a page at a time. */
export const listOwnKeys = defineOperation({
  ...OWN_KEYS,
  operationId: "listOwnKeys",
  method: "get",
  path: "/keys",
  summary: "List the keys of the caller's account",
  description:
    "Every key of the calling key's account, newest first: the key itself and those it was rotated from or to, with " +
    "their " +
    "state: a key revoked as leaked with what that ended, and the keys it made by rotation marked. Never a key " +
    "itself: only its first 12 characters. " +
    "A page at a time in key id order (newest first within a page), nextCursor for the next.",
  queryParameters: documentedParameters(PARAMETERS, QUERY_SCHEMAS),
  responses: { 200: { description: "The account's keys", body: OwnKeys } },
  errors: ["invalid_query"],
  async handle(c) {
    const caller = keyOfCaller(c);
    const { value, invalid } = strictQuery(new URL(c.req.url).searchParams, PARAMETERS);
    const limitText = value("limit");
    const limit = limitText === undefined ? MAX_KEYS_PAGE : plainWholeNumber(limitText, 1, MAX_KEYS_PAGE);
    if (limit === undefined) throw invalid("limit", limitText!);
    const cursorText = value("cursor");
    const after = cursorText === undefined ? undefined : (await readCursor(CURSOR_PURPOSE, cursorText, 1))?.[0];
    if (cursorText !== undefined && after === undefined) throw invalid("cursor", cursorText);
    const now = Date.now();
    const found = await accountKeysPage(c.env.ACCOUNTS, accountOf(caller), {
      ...(after !== undefined && { after }),
      limit,
    });
    const page = {
      ...found,
      keys: found.keys.sort((a, b) => b.createdAt.localeCompare(a.createdAt)),
      last: found.lastId,
    };
    const leaks = await leaksOf(c.env.DB, page.keys);
    const nextCursor = page.more && page.last !== undefined ? await makeCursor(CURSOR_PURPOSE, [page.last]) : null;
    return jsonBody(c, { data: page.keys.map((record) => ownKeyOf(record, caller.id, now, leaks)), nextCursor });
  },
});
