import { z } from "zod";
import type { Context } from "hono";
import { defineOperation } from "../framework/operations/define-operation";
import type { AppEnv } from "../framework/app-env";
import { ApiError } from "../framework/api-error";
import { jsonBody } from "../framework/counted-body";
import { callDependency } from "../lib/call-dependency";
import { sha256Hex } from "../lib/digest";
import { isUsable } from "../account/key-record";
import { accountStub } from "../account/account-stub";
import { isWellFormedKey } from "../keys/key-format";
import { KeyPointer, pointerName } from "../keys/kv-layout";
import { SCANNER_ACTOR } from "../keys/audit";
import { revokeKey } from "./key-revocation";

/** Where GitHub sends reports: outside the API's versions, with no bearer key. */
export const SECRET_SCANNING_PATH = "/secret-scanning/github";
/** A report's bytes at most: GitHub sends many matches at once, more than the API's 16 KB bodies. */
export const MAX_REPORT_BYTES = 1_048_576;
/** Matches one report may carry: beyond, 413, as for a body past MAX_REPORT_BYTES. */
export const MAX_REPORT_TOKENS = 1_000;
/** KV's bulk read takes at most 100 names: a report of 1,000 tokens is 10 reads, not 1,000. */
const BULK_READ = 100;
/** Live keys one request revokes (about 12 of its 1,000 subrequests each); more get a 503, and GitHub resends. */
export const MAX_REVOCATIONS_PER_REPORT = 50;

const Match = z.object({
  token: z.string().max(1_024),
  type: z.string().max(256),
  url: z.string().max(4_096).optional(),
  source: z.string().max(64).optional(),
});
const Report = z.array(Match).min(1);

/** 401 for a report GitHub did not sign; scanning-credential.ts reads and verifies it before the limiter. */
export const invalidSignature = (why: string) =>
  new ApiError("invalid_signature", `This report is not signed by GitHub: ${why}.`, {
    "WWW-Authenticate": 'Github-Public-Key-Signature realm="secret-scanning"',
  });

const Feedback = z.array(
  z.object({ token_hash: z.string(), token_type: z.string(), label: z.enum(["true_positive", "false_positive"]) }),
);

/**
 * POST /secret-scanning/github: GitHub's partner endpoint (docs/operations.md#secret-scanning). Each token is looked up
 * by digest and a live key revoked as leaked before the answer, so nothing it started outlives the report. The answer
 * is GitHub's feedback: `true_positive` for a key that was live, else `false_positive`.
 */
export const reportLeakedTokens = defineOperation({
  operationId: "reportLeakedTokens",
  public: true,
  documented: false,
  method: "post",
  path: SECRET_SCANNING_PATH,
  summary: "GitHub's report of keys found in public",
  description:
    "Signed by GitHub (Github-Public-Key-Identifier, Github-Public-Key-Signature); each live key found is revoked as " +
    "leaked.",
  tag: "Service",
  stability: "beta",
  responses: { 200: { description: "GitHub's feedback: one label a match", body: Feedback } },
  errors: ["invalid_signature", "body_too_large", "unsupported_media_type", "invalid_body"],
  async handle(c) {
    const report = c.get("secretScanningReport") ?? { ok: false, refusal: invalidSignature("no report was read") };
    if (!report.ok) throw report.refusal;
    const feedback = await judge(c, parseReport(report.value));
    report.answered();
    return jsonBody(c, feedback);
  },
});

function parseReport(value: unknown): z.infer<typeof Report> {
  if (value === undefined) throw new ApiError("invalid_body", "The report is not valid JSON.");
  if (Array.isArray(value) && value.length > MAX_REPORT_TOKENS) {
    throw new ApiError(
      "body_too_large",
      `A report carries at most ${MAX_REPORT_TOKENS} matches and ${MAX_REPORT_BYTES} bytes; send the rest in another.`,
    );
  }
  const parsed = Report.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ApiError("invalid_body", `${issue.path.join(".") || "the report"}: ${issue.message}`.slice(0, 300));
  }
  return parsed.data;
}

/** Each match's label, in the report's order; every live key among them revoked as leaked first. */
async function judge(c: Context<AppEnv>, matches: z.infer<typeof Report>): Promise<z.infer<typeof Feedback>> {
  const hashes = new Map<string, string>();
  for (const { token } of matches) if (!hashes.has(token)) hashes.set(token, await sha256Hex(token));
  // A string not in the key format is no key of this service's: judged without a lookup.
  const wellFormed = [...hashes].filter(([token]) => isWellFormedKey(token));
  const live = new Set<string>();
  for (let start = 0; start < wellFormed.length; start += BULK_READ) {
    const chunk = wellFormed.slice(start, start + BULK_READ);
    const stored = await callDependency("KV", () =>
      c.env.API_KEYS.get(
        chunk.map(([, hash]) => pointerName(hash)),
        "json",
      ),
    );
    for (const [token, hash] of chunk) {
      const pointer = KeyPointer.safeParse(stored.get(pointerName(hash)));
      if (!pointer.success) continue;
      const { keyId, account } = pointer.data;
      const record = await callDependency("account", () => accountStub(c.env.ACCOUNTS, account).key(keyId));
      // A live key, or one whose leak's ending stopped part way.
      if (!record || !(isUsable(record) || (record.revokedReason === "leaked" && record.leakEndedAt === undefined)))
        continue;
      if (live.size === MAX_REVOCATIONS_PER_REPORT) {
        throw new ApiError(
          "service_unavailable",
          `This report holds more than ${MAX_REVOCATIONS_PER_REPORT} live keys: the first are revoked; send it again ` +
            `for the rest.`,
          { "Retry-After": "1" },
        );
      }
      const found = matches.find((match) => match.token === token)!;
      await revokeKey(c, record, {
        reason: "leaked",
        actor: SCANNER_ACTOR,
        found: { url: found.url, source: found.source },
      });
      live.add(token);
    }
  }
  return matches.map(({ token, type }) => ({
    token_hash: hashes.get(token)!,
    token_type: type,
    label: live.has(token) ? ("true_positive" as const) : ("false_positive" as const),
  }));
}
