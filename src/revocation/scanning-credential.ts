/**
 * Who sent a secret scanning report (docs/operations.md#secret-scanning): GitHub, when its signature verifies with a
 * key it publishes. Worked out before the limiter, so a verified report is counted on the partner's own budget, never
 * its address's; one that fails is counted by address and refused 401. A verified report that can change nothing has a
 * budget of its own, so replays never spend what GitHub's next report needs.
 */
import type { LeaseClient } from "../account/lease-client";
import type { Context } from "hono";
import { ApiError } from "../framework/api-error";
import type { AppEnv } from "../framework/app-env";
import { cappedBody } from "../framework/operations/read-json-body";
import { DependencyUnavailable } from "../lib/call-dependency";
import { sha256Hex } from "../lib/digest";
import type { TtlCache } from "../lib/ttl-cache";
import { isWellFormedKey } from "../keys/key-format";
import { PARTNER_BUDGETS, type PartnerBudget } from "../account/plans";
import { MISSING_KEY, type OtherCredential } from "../keys/caller";
import { GithubKeysUnavailable, type GithubPublicKeys } from "./github-public-keys";
import { verifyGithubSignature } from "./github-signature";
import { invalidSignature, MAX_REPORT_BYTES } from "./report-leaked-tokens";

const KEY_IDENTIFIER_HEADER = "Github-Public-Key-Identifier";
const SIGNATURE_HEADER = "Github-Public-Key-Signature";

/** How long a verified report, once answered, is known by its bytes: sent again, it is not counted on GitHub's. */
export const ANSWERED_FOR_MS = 3_600_000;

/** The verified reports answered within the hour, by the digest of their bytes. */
export type AnsweredReports = TtlCache<string, true>;

/** The report as the credential left it (verified bytes, JSON, how to note it answered), or why it was refused. */
export type ScanningReport =
  | { ok: true; body: Uint8Array; value: unknown; answered(): void }
  | { ok: false; refusal: ApiError };

/** The account a verified report is counted on: GitHub's, or, for one that can change nothing, its own. */
const partner = (name: PartnerBudget) => ({ name, limits: PARTNER_BUDGETS[name] });
const PARTNER = partner("github");
const CHANGES_NOTHING = partner("github:changes-nothing");

declare module "hono" {
  interface ContextVariableMap {
    /** Set by the secret scanning credential on a report to SECRET_SCANNING_PATH. */
    secretScanningReport: ScanningReport;
  }
}

export const secretScanningCredential =
  (keys: GithubPublicKeys, answered: AnsweredReports, leases: Pick<LeaseClient, "knowsBanned">): OtherCredential =>
  async (c, address) => {
    // An address group known banned here is refused before its body is read: a flood costs no buffer, no check.
    if (c.req.method !== "POST" || leases.knowsBanned(`ip:${address}`, Date.now())) return undefined;
    const read = await readReport(c, keys);
    if (!read.ok) {
      c.set("secretScanningReport", read);
      return undefined;
    }
    const digest = await sha256Hex(read.body);
    const value = jsonOf(read.body);
    const seen = answered.get(digest, Date.now()) !== undefined;
    c.set("secretScanningReport", {
      ...read,
      value,
      answered: () => answered.set(digest, true, ANSWERED_FOR_MS, Date.now()),
    });
    const partner = !seen && holdsServiceToken(value) ? PARTNER : CHANGES_NOTHING;
    return { kind: "anonymous", address, rejection: MISSING_KEY, partner };
  };

/** The report's JSON, undefined when its bytes are none (the operation says why). */
function jsonOf(body: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body));
  } catch {
    return undefined;
  }
}

/** Whether any match's token has this service's key format: only such a report can revoke a key. */
const holdsServiceToken = (value: unknown): boolean =>
  Array.isArray(value) && value.some((match) => typeof match?.token === "string" && isWellFormedKey(match.token));

async function readReport(
  c: Context<AppEnv>,
  keys: GithubPublicKeys,
): Promise<{ ok: true; body: Uint8Array<ArrayBuffer> } | { ok: false; refusal: ApiError }> {
  const identifier = c.req.header(KEY_IDENTIFIER_HEADER);
  const signature = c.req.header(SIGNATURE_HEADER);
  if (!identifier || !signature)
    return { ok: false, refusal: invalidSignature(`send ${KEY_IDENTIFIER_HEADER} and ${SIGNATURE_HEADER}`) };
  // The key before the body: a report naming no key GitHub publishes is refused without reading a byte of it.
  let key: CryptoKey | undefined;
  try {
    key = await keys.find(c.get("config").secretScanningKeysUrl, identifier, fetch);
  } catch (error) {
    if (!(error instanceof GithubKeysUnavailable)) throw error;
    // GitHub's keys could not be had: the report is neither trusted nor refused, and GitHub sends it again.
    return {
      ok: false,
      refusal: new ApiError(
        "service_unavailable",
        "GitHub's public keys could not be fetched; send the report again.",
        { "Retry-After": "60" },
        new DependencyUnavailable("GitHub's public keys", error),
      ),
    };
  }
  if (!key) return { ok: false, refusal: invalidSignature(`GitHub publishes no key ${identifier.slice(0, 80)}`) };
  let body: Uint8Array<ArrayBuffer>;
  try {
    body = await cappedBody(c.req.raw, MAX_REPORT_BYTES);
  } catch (error) {
    if (error instanceof ApiError) return { ok: false, refusal: error };
    throw error;
  }
  if (!(await verifyGithubSignature(key, signature, body)))
    return { ok: false, refusal: invalidSignature("the signature does not verify over the body") };
  return { ok: true, body };
}
