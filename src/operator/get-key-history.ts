import { z } from "zod";
import { jsonBody } from "../framework/counted-body";
import { documentedParameters, strictQuery } from "../framework/operations/strict-query";
import { callDependency } from "../lib/call-dependency";
import { KEY_HISTORY, keyEventOf, type KeyEventRow } from "../keys/audit";
import { keyOperation } from "./key-operation";

/** Events a page: a key's whole life in one page but for keys changed by a script in a loop. */
const PAGE = 500;
const PARAMETERS = { after: "a row number: the events after it (the answer's next)" } as const;

/** GET /admin/keys/{keyId}/history: a key's audit, oldest first (`npm run keys -- history`). */
export const getKeyHistory = keyOperation(
  {
    operationId: "getKeyHistory",
    method: "get",
    action: "history",
    summary: "A key's audit: every operation on it, who made it, what changed",
    description: `Oldest first, ${PAGE} a page: after= the answer's next for the following page.`,
    queryParameters: documentedParameters(PARAMETERS, { after: { type: "string", pattern: "^[0-9]{1,15}$" } }),
    errors: ["not_found", "invalid_query"],
    body: z.object({
      events: z.array(z.object({}).loose()),
      next: z.string().nullable().describe("Pass as after= for the next page; null on the last"),
    }),
  },
  async (c, { record }) => {
    const { value, invalid } = strictQuery(new URL(c.req.url).searchParams, PARAMETERS);
    const after = value("after") ?? "0";
    if (!/^[0-9]{1,15}$/.test(after)) throw invalid("after", after);
    const { results } = await callDependency("D1", () =>
      c.env.DB.prepare(KEY_HISTORY)
        .bind(record.id, Number(after), PAGE + 1)
        .all<KeyEventRow>(),
    );
    const page = results.slice(0, PAGE);
    return jsonBody(c, {
      events: page.map(keyEventOf),
      next: results.length > PAGE ? String(page.at(-1)!.id) : null,
    });
  },
);
