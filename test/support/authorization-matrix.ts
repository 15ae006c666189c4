import { runInDurableObject } from "cloudflare:test";
import { SignJWT } from "jose";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it, vi } from "vitest";
import worker, { routes } from "../../src/app/worker";
import type { Operation } from "../../src/framework/operations/define-operation";
import { ANY_KEY, SCOPES, type Scope } from "../../src/framework/operations/scopes";
import { appendSettled } from "../../src/webhook-delivery/lane-log";
import { deliveryIdOf, laneOf } from "../../src/webhook-delivery/lane-calls";
import { sha256Hex } from "../../src/lib/digest";
import { INSERT_OPERATOR } from "../../src/operator/operator-table";
import { ORIGIN, recordingContext } from "./request";
import { seedOrders } from "./seed";
import { storeTestKey, type TestKey } from "./test-keys";
import { accountStub } from "../../src/account/account-stub";
import { accountOf } from "../../src/account/key-record";
import { withoutDispatcher } from "./webhook-fixtures";

/**
 * Every operation's answer to every kind of caller (docs/api.md#authentication,
 * docs/operations.md#operator-api): one row per operation of the route table,
 * so an operation is in it the day it is added, and the test fails on a row
 * or a cell missing. Each cell is `status` or `status code`; the row is
 * compared whole, so a diff shows which caller got what. A cell that is a
 * decision rather than a rule (a public operation, a cookie on a GET) is
 * written down here and in the docs.
 *
 * The callers, in the columns' order:
 * - owner: a key of the subject's account with every scope (on an operator
 *   route: a caller's key where the operator token belongs);
 * - none: no credential; malformed: `Bearer not-a-key`;
 * - other account: a valid key, every scope, of another account;
 * - lacks scope: a key of the account with every scope but the operation's;
 * - expired; revoked (before its first use: past the 5 s promise);
 * - grace: a key of the account rotated away (in its grace), acting on another
 *   key where the operation names one;
 * - expiring: a key of the account made with an expiry, never rotated;
 * - cookie: a console session of the account's key, from the console's origin;
 *   cookie, no Origin: the same without an `Origin`; cookie, other account;
 *   ended: the cookie of a session that was ended;
 * - operator: the OPERATOR_TOKEN secret's token (on a caller's route, it is
 *   not a key); named operator: a token of the operators' table
 *   (docs/operations.md#operators); revoked operator: one whose operator was
 *   revoked before its first use;
 * - operator session: an operators' console session of a named operator,
 *   from the console's origin (docs/operations.md#the-operators-console), and
 *   operator session, no Origin: the same without an `Origin`;
 * - Access operator: where Cloudflare Access guards the operators' side
 *   (docs/operations.md#cloudflare-access), an assertion Access signed for a
 *   person, with no `Origin` (as the keys command's service token sends it).
 */
const COLUMNS = [
  "owner",
  "none",
  "malformed",
  "other budget",
  "lacks scope",
  "expired",
  "revoked",
  "grace",
  "expiring",
  "cookie",
  "cookie, no Origin",
  "cookie, other budget",
  "ended",
  "operator",
  "named operator",
  "revoked operator",
  "operator session",
  "operator session, no Origin",
  "Access operator",
] as const;
type Column = (typeof COLUMNS)[number];

const ALL: Scope[] = [...SCOPES];
const LIMITS = { perMinute: 1_000_000, perDay: 10_000_000 };
const OPERATOR_TOKEN = "operator-token-for-tests";
const DAY = 86_400_000;

// Columns: owner | none | malformed | other account | lacks scope | expired | revoked | grace | expiring | cookie |
// cookie, no Origin | cookie, other account | ended | operator | named operator | revoked operator | operator session |
// operator session, no Origin | Access operator
// prettier-ignore
export const MATRIX: Record<string, string> = {
  // Public: what the service is, for anyone, whatever they send.
  "GET /":
    "200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200",
  "GET /console":
    "200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200",
  // The operators' console's page loads for anyone where the operator API exists; what it shows needs an operator.
  "GET /operator":
    "200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200",
  // GitHub's secret scanning reports: GitHub's signature is the one credential; no key, token or session stands for it
  // (test/workers/revocation/secret-scanning.test.ts sends signed ones).
  "POST /secret-scanning/github":
    "401 invalid_signature | 401 invalid_signature | 401 invalid_signature | 401 invalid_signature | 401 " +
    "invalid_signature | 401 invalid_signature | 401 invalid_signature | 401 invalid_signature | 401 " +
    "invalid_signature | 401 invalid_signature | 401 invalid_signature | 401 invalid_signature | 401 " +
    "invalid_signature | 401 invalid_signature | 401 invalid_signature | 401 invalid_signature | 401 " +
    "invalid_signature | 401 invalid_signature | 401 invalid_signature",
  // Orders are the one store's, not an account's: any key with the scope reads and cancels them
  // (docs/api.md#authentication).
  // A cookie reads without an Origin (a GET changes nothing); every change needs the console's own.
  "GET /v1/store/orders":
    "200 | 401 missing_api_key | 401 invalid_api_key | 200 | 403 insufficient_scope | 401 invalid_api_key | 401 " +
    "invalid_api_key | 200 | 200 | 200 | 200 | 200 | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key " +
    "| 401 invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "DELETE /v1/store/orders/{orderId}":
    "204 | 401 missing_api_key | 401 invalid_api_key | 204 | 403 insufficient_scope | 401 invalid_api_key | 401 " +
    "invalid_api_key | 204 | 204 | 204 | 403 cross_site_request | 204 | 401 session_ended | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  // Deprecated: the key is checked before the pet (1 is not a pet).
  "GET /v1/pets/{petId}":
    "404 pet_not_found | 401 missing_api_key | 401 invalid_api_key | 404 pet_not_found | 403 " +
    "insufficient_scope | 401 " +
    "invalid_api_key | 401 invalid_api_key | 404 pet_not_found | 404 pet_not_found | 404 pet_not_found | 404 " +
    "pet_not_found | 404 pet_not_found | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key | 401 " +
    "invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  // The documents, the reference pages and the versions' descriptions are public.
  "GET /v1/openapi.json":
    "200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200",
  "GET /v1/docs":
    "200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200",
  "GET /v1":
    "200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200",
  "GET /v2/store/orders":
    "200 | 401 missing_api_key | 401 invalid_api_key | 200 | 403 insufficient_scope | 401 invalid_api_key | 401 " +
    "invalid_api_key | 200 | 200 | 200 | 200 | 200 | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key " +
    "| 401 invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "GET /v2/store/orders/{orderId}":
    "200 | 401 missing_api_key | 401 invalid_api_key | 200 | 403 insufficient_scope | 401 invalid_api_key | 401 " +
    "invalid_api_key | 200 | 200 | 200 | 200 | 200 | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key " +
    "| 401 invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "DELETE /v2/store/orders/{orderId}":
    "204 | 401 missing_api_key | 401 invalid_api_key | 204 | 403 insufficient_scope | 401 invalid_api_key | 401 " +
    "invalid_api_key | 204 | 204 | 204 | 403 cross_site_request | 204 | 401 session_ended | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "GET /v2/store/order-events":
    "200 | 401 missing_api_key | 401 invalid_api_key | 200 | 403 insufficient_scope | 401 invalid_api_key | 401 " +
    "invalid_api_key | 200 | 200 | 200 | 200 | 200 | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key " +
    "| 401 invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  // An account's endpoints are its own: another account's key or session finds none (404), and makes one of its own
  // account. A key rotated away (grace) acts only on itself: it reads endpoints but changes none, as whoever leaked it
  // may hold it (docs/api.md#what-a-leak-ends); a key made to expire and never rotated (expiring) manages them.
  "POST /v2/webhook-endpoints":
    "201 | 401 missing_api_key | 401 invalid_api_key | 201 | 403 insufficient_scope | 401 invalid_api_key | 401 " +
    "invalid_api_key | 403 key_acts_only_on_itself | 201 | 201 | 403 cross_site_request | 201 | 401 session_ended | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | 401 missing_api_key " +
    "| 401 missing_api_key",
  "GET /v2/webhook-endpoints":
    "200 | 401 missing_api_key | 401 invalid_api_key | 200 | 403 insufficient_scope | 401 invalid_api_key | 401 " +
    "invalid_api_key | 200 | 200 | 200 | 200 | 200 | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key " +
    "| 401 invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "GET /v2/webhook-endpoints/{endpointId}":
    "200 | 401 missing_api_key | 401 invalid_api_key | 404 webhook_endpoint_not_found | 403 insufficient_scope | 401 " +
    "invalid_api_key | 401 invalid_api_key | 200 | 200 | 200 | 200 | 404 webhook_endpoint_not_found | 401 " +
    "session_ended | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | 401 " +
    "missing_api_key | 401 missing_api_key",
  "PATCH /v2/webhook-endpoints/{endpointId}":
    "200 | 401 missing_api_key | 401 invalid_api_key | 404 webhook_endpoint_not_found | 403 insufficient_scope | 401 " +
    "invalid_api_key | 401 invalid_api_key | 403 key_acts_only_on_itself | 200 | 200 | 403 cross_site_request | 404 " +
    "webhook_endpoint_not_found | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key | 401 " +
    "invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "POST /v2/webhook-endpoints/{endpointId}/rotate-secret":
    "200 | 401 missing_api_key | 401 invalid_api_key | 404 webhook_endpoint_not_found | 403 insufficient_scope | 401 " +
    "invalid_api_key | 401 invalid_api_key | 403 key_acts_only_on_itself | 200 | 200 | 403 cross_site_request | 404 " +
    "webhook_endpoint_not_found | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key | 401 " +
    "invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "POST /v2/webhook-endpoints/{endpointId}/test":
    "200 | 401 missing_api_key | 401 invalid_api_key | 404 webhook_endpoint_not_found | 403 insufficient_scope | 401 " +
    "invalid_api_key | 401 invalid_api_key | 403 key_acts_only_on_itself | 200 | 200 | 403 cross_site_request | 404 " +
    "webhook_endpoint_not_found | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key | 401 " +
    "invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "DELETE /v2/webhook-endpoints/{endpointId}":
    "204 | 401 missing_api_key | 401 invalid_api_key | 404 webhook_endpoint_not_found | 403 insufficient_scope | 401 " +
    "invalid_api_key | 401 invalid_api_key | 403 key_acts_only_on_itself | 204 | 204 | 403 cross_site_request | 404 " +
    "webhook_endpoint_not_found | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key | 401 " +
    "invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "GET /v2/webhook-endpoints/{endpointId}/deliveries":
    "200 | 401 missing_api_key | 401 invalid_api_key | 404 webhook_endpoint_not_found | 403 insufficient_scope | 401 " +
    "invalid_api_key | 401 invalid_api_key | 200 | 200 | 200 | 200 | 404 webhook_endpoint_not_found | 401 " +
    "session_ended | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | 401 " +
    "missing_api_key | 401 missing_api_key",
  "POST /v2/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry":
    "202 | 401 missing_api_key | 401 invalid_api_key | 404 webhook_endpoint_not_found | 403 insufficient_scope | 401 " +
    "invalid_api_key | 401 invalid_api_key | 403 key_acts_only_on_itself | 202 | 202 | 403 cross_site_request | 404 " +
    "webhook_endpoint_not_found | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key | 401 " +
    "invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "POST /v2/webhook-endpoints/{endpointId}/recover":
    "202 | 401 missing_api_key | 401 invalid_api_key | 404 webhook_endpoint_not_found | 403 insufficient_scope | 401 " +
    "invalid_api_key | 401 invalid_api_key | 403 key_acts_only_on_itself | 202 | 202 | 403 cross_site_request | 404 " +
    "webhook_endpoint_not_found | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key | 401 " +
    "invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "GET /v2/usage":
    "200 | 401 missing_api_key | 401 invalid_api_key | 200 | 403 insufficient_scope | 401 invalid_api_key | 401 " +
    "invalid_api_key | 200 | 200 | 200 | 200 | 200 | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key " +
    "| 401 invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "GET /v2/keys":
    "200 | 401 missing_api_key | 401 invalid_api_key | 200 | 403 insufficient_scope | 401 invalid_api_key | 401 " +
    "invalid_api_key | 200 | 200 | 200 | 200 | 200 | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key " +
    "| 401 invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  // Key operations act on another key of the account: refused to a key rotated away (key_acts_only_on_itself).
  "POST /v2/keys/{keyId}/rotate":
    "201 | 401 missing_api_key | 401 invalid_api_key | 404 key_not_found | 403 insufficient_scope | 401 " +
    "invalid_api_key | 401 invalid_api_key | 403 key_acts_only_on_itself | 403 key_acts_only_on_itself | 201 | 403 " +
    "cross_site_request | 404 key_not_found | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key | 401 " +
    "invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "POST /v2/keys/{keyId}/revoke":
    "200 | 401 missing_api_key | 401 invalid_api_key | 404 key_not_found | 403 insufficient_scope | 401 " +
    "invalid_api_key | 401 invalid_api_key | 403 key_acts_only_on_itself | 403 key_acts_only_on_itself | 200 | 403 " +
    "cross_site_request | 404 key_not_found | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key | 401 " +
    "invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  // Signing in takes the key itself: a cookie cannot open another session (401 missing_api_key), an ended one is told
  // so.
  "POST /v2/console/session":
    "201 | 401 missing_api_key | 401 invalid_api_key | 201 | 201 | 401 invalid_api_key | 401 invalid_api_key | 201 | " +
    "201 | 401 missing_api_key | 403 cross_site_request | 401 missing_api_key | 401 session_ended | 401 " +
    "invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | 401 missing_api_key | " +
    "401 missing_api_key",
  // Public: the link's token is the credential (an unknown one here), whoever sends it.
  "POST /v2/console/session/link":
    "401 invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 " +
    "invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 " +
    "invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 " +
    "invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | " +
    "401 invalid_console_link | 401 invalid_console_link | 401 invalid_console_link",
  // Any valid key may read its session: no scope asked.
  "GET /v2/console/session":
    "200 | 401 missing_api_key | 401 invalid_api_key | 200 | 200 | 401 invalid_api_key | 401 invalid_api_key | 200 | " +
    "200 | 200 | 200 | 200 | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  // Signing out takes any valid key or session, and ends only the caller's own: one with a bearer key has none to end
  // (204 all the same).
  "DELETE /v2/console/session":
    "204 | 401 missing_api_key | 401 invalid_api_key | 204 | 204 | 401 invalid_api_key | 401 invalid_api_key | 204 | " +
    "204 | 204 | 403 cross_site_request | 204 | 401 session_ended | 401 invalid_api_key | 401 invalid_api_key | 401 " +
    "invalid_api_key | 401 missing_api_key | 401 missing_api_key | 401 missing_api_key",
  "GET /v2/openapi.json":
    "200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200",
  "GET /v2/docs":
    "200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200",
  "GET /v2":
    "200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200 | 200",
  // The operator API: only an operator's token, the secret's or a live named operator's; a caller's key is not one (401
  // invalid_api_key), nor is a cookie (401 missing_api_key), nor a revoked operator's token. The operators' console's
  // sign-in: a token opens a session (a session does not open another: 401 missing_api_key); a link's token is the
  // credential, public and limited per address like any keyless call; sign-out is a write, so it needs the Origin.
  // Behind Access there are no sessions of this service's (Access signs operators in): signing in is 404, signing out a
  // no-op.
  "POST /admin/session":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 201 | 201 | 401 invalid_api_key | 401 " +
    "missing_api_key | 403 cross_site_request | 404 not_found",
  "POST /admin/session/link":
    "401 invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 " +
    "invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 " +
    "invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 " +
    "invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | 401 invalid_console_link | " +
    "401 invalid_console_link | 401 invalid_console_link | 404 not_found",
  "GET /admin/session":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "200 | 200",
  "DELETE /admin/session":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 204 | 204 | 401 invalid_api_key | 204 | " +
    "403 cross_site_request | 204",
  // An operator's session acts as its operator on every operation, writes only with the console's own Origin.
  "GET /admin/keys":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "200 | 200",
  "GET /admin/keys/{keyId}/budget":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "200 | 200",
  "GET /admin/webhook-endpoints":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "200 | 200",
  "GET /admin/webhook-endpoints/{endpointId}/deliveries":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "200 | 200",
  "POST /admin/webhook-endpoints/{endpointId}/disable":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "403 cross_site_request | 200",
  "POST /admin/webhook-endpoints/{endpointId}/enable":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "403 cross_site_request | 200",
  // A host never locked has no lock to lift: an operator is told 404, as for any lock that is not there.
  "POST /admin/host-locks":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "403 cross_site_request | 200",
  "DELETE /admin/host-locks/{host}":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 404 not_found | 404 not_found | 401 " +
    "invalid_api_key | 404 not_found | 403 cross_site_request | 404 not_found",
  "GET /admin/pipeline":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "200 | 200",
  // Traffic reads the request analytics, which the tests' environment (as a local one) does not name: every operator
  // gets the same 501.
  "GET /admin/traffic":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 501 traffic_not_configured | 501 " +
    "traffic_not_configured | 401 invalid_api_key | 501 traffic_not_configured | 501 traffic_not_configured | " +
    "501 traffic_not_configured",
  "GET /admin/order-events/sequence":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "200 | 200",
  "POST /admin/order-events/sequence":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "403 cross_site_request | 200",
  "GET /admin/keys/{keyId}/usage":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "200 | 200",
  "GET /admin/keys/{keyId}/usage/history":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "200 | 200",
  "POST /admin/keys/{keyId}/unban":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "403 cross_site_request | 200",
  "POST /admin/address-groups/unban":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "403 cross_site_request | 200",
  // As the other unbans: operators only; a console session's cross-site write refused.
  "POST /admin/partners/{partner}/unban":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "403 cross_site_request | 200",
  // Keys issued, shown, changed and rotated, and the named operators: operators only, as the rest.
  "POST /admin/keys":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 201 | 201 | 401 invalid_api_key | 201 | " +
    "403 cross_site_request | 201",
  "GET /admin/keys/{keyId}":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "200 | 200",
  "PATCH /admin/keys/{keyId}":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "403 cross_site_request | 200",
  "GET /admin/keys/{keyId}/history":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "200 | 200",
  "POST /admin/keys/{keyId}/rotate":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 201 | 201 | 401 invalid_api_key | 201 | " +
    "403 cross_site_request | 201",
  "GET /admin/operators":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "200 | 200",
  "POST /admin/operators":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 201 | 201 | 401 invalid_api_key | 201 | " +
    "403 cross_site_request | 201",
  "POST /admin/operators/{name}/revoke":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "403 cross_site_request | 200",
  // A sign-in link acts as the operator it names: an operator makes their own, the secret's holder anyone's (the
  // subject here is another named operator).
  "POST /admin/operators/{name}/link":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 201 | 404 not_found | 401 invalid_api_key | " +
    "404 not_found | 403 cross_site_request | 404 not_found",
  "POST /admin/keys/{keyId}/limits":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "403 cross_site_request | 200",
  "POST /admin/keys/{keyId}/revoke":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 200 | 200 | 401 invalid_api_key | 200 | " +
    "403 cross_site_request | 200",
  "POST /admin/keys/{keyId}/console-link":
    "401 invalid_api_key | 401 missing_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | " +
    "401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 invalid_api_key | 401 missing_api_key | " +
    "401 missing_api_key | 401 missing_api_key | 401 missing_api_key | 201 | 201 | 401 invalid_api_key | 201 | " +
    "403 cross_site_request | 201",
};

/**
 * An account and what its callers act on: the keys and sessions of each column,
 * an endpoint with a failed delivery, a pending order, and another key of the
 * account (the one key operations act on).
 */
interface World {
  owner: TestKey;
  other: TestKey;
  lacking: TestKey;
  expired: TestKey;
  revoked: TestKey;
  grace: TestKey;
  expiring: TestKey;
  cookie: string;
  endedCookie: string;
  /** A key of another account, every scope, and a console session of it. */
  stranger: TestKey;
  strangerCookie: string;
  endpointId: string;
  /** The event of the endpoint's failed delivery. */
  seq: number;
  deliveryId: string;
  orderId: string;
  /** Tokens of a live named operator and of a revoked one. */
  operatorToken: string;
  revokedOperatorToken: string;
  /** An operators' console session of the live named operator. */
  operatorCookie: string;
  /** An assertion Access signed for a person. */
  accessAssertion: string;
  /** A live named operator that the path names (not the one whose token calls). */
  subjectOperator: string;
}

/** The endpoint id of a world whose operation names none. */
const NO_ENDPOINT = "we_00000000000000000000";

let serial = 0;
const next = () => ++serial;

async function signIn(key: TestKey): Promise<string> {
  const response = await send(env, "/v2/console/session", {
    method: "POST",
    headers: { Authorization: `Bearer ${key.key}`, Origin: ORIGIN },
  });
  expect(response.status, "a console sign-in").toBe(201);
  return response.headers.get("Set-Cookie")!.split(";")[0]!;
}

/**
 * The scope an operation's `lacks scope` caller lacks: its own; for one that asks none, a key with orders:read alone.
 */
const scopeOf = (operation: Operation): Scope | undefined =>
  operation.scope && operation.scope !== ANY_KEY ? operation.scope : undefined;

async function makeWorld(operation: Operation): Promise<World> {
  const owner = await storeTestKey({ plan: "enterprise", limits: LIMITS, scopes: ALL });
  const key = (options: Parameters<typeof storeTestKey>[0]) =>
    storeTestKey({ plan: "enterprise", limits: LIMITS, scopes: ALL, budget: owner.record.id, ...options });
  const lacks = scopeOf(operation);
  const ended = await key({});
  const endedCookie = await signIn(ended);
  expect(
    (await send(env, "/v2/console/session", { method: "DELETE", headers: { Cookie: endedCookie, Origin: ORIGIN } }))
      .status,
  ).toBe(204);
  // What the operation's path names, and only that: an order, an endpoint with a failed delivery.
  const orderId = String(900_000 + next());
  let endpointId = NO_ENDPOINT;
  let seq = 0;
  if (operation.path.includes("{orderId}") || operation.path.includes("{endpointId}")) {
    await seedOrders([{ id: Number(orderId), status: "pending" }]);
    seq = (await env.DB.prepare("SELECT max(seq) AS seq FROM order_events").first<number>("seq"))!;
  }
  if (operation.path.includes("{endpointId}")) endpointId = await endpointWithFailure(owner, seq);
  const stranger = await storeTestKey({ plan: "enterprise", limits: LIMITS, scopes: ALL });
  return {
    owner,
    stranger,
    strangerCookie: await signIn(stranger),
    other: await key({}),
    lacking: await key({ scopes: lacks ? ALL.filter((each) => each !== lacks) : ["orders:read"] }),
    expired: await key({ expiresAt: new Date(Date.now() - 60_000).toISOString() }),
    revoked: await key({ revokedAt: new Date(Date.now() - 60_000).toISOString() }),
    grace: await rotatedAway(await key({ expiresAt: new Date(Date.now() + DAY).toISOString() }), owner),
    expiring: await key({ expiresAt: new Date(Date.now() + DAY).toISOString() }),
    cookie: await signIn(owner),
    endedCookie,
    endpointId,
    seq,
    deliveryId: deliveryIdOf(endpointId, seq),
    orderId,
    ...(await operatorTokenAndSession()),
    revokedOperatorToken: await namedOperator(new Date(Date.now() - 60_000).toISOString()),
    subjectOperator: await namedOperatorName(),
    accessAssertion: await accessAssertion(),
  };
}

/** The key as a rotation to `into` (a key of its account already) leaves it: in its grace, naming `into`. */
async function rotatedAway(key: TestKey, into: TestKey): Promise<TestKey> {
  const { id, start, createdAt } = into.record;
  const done = await accountStub(env.ACCOUNTS, accountOf(key.record)).rotateKey(
    key.record.id,
    { id, start, createdAt },
    key.record.expiresAt!,
  );
  if (done.kind !== "rotated") throw new Error(`the rotation was refused: ${done.kind}`);
  return { key: key.key, record: done.previous };
}

/** A new endpoint of the owner's, with a failed delivery of event `seq` in its lane: its id. */
async function endpointWithFailure(owner: TestKey, seq: number): Promise<string> {
  const made = await send(withoutDispatcher(), "/v2/webhook-endpoints", {
    method: "POST",
    headers: { Authorization: `Bearer ${owner.key}` },
    body: JSON.stringify({ url: `https://receiver.example/matrix-${next()}` }),
  });
  expect(made.status, `an endpoint made: ${await made.clone().text()}`).toBe(201);
  const endpointId = (await made.json<{ id: string }>()).id;
  await runInDurableObject(laneOf(env, endpointId), (_, state) => {
    state.storage.kv.put("endpointId", endpointId);
    appendSettled(state.storage.sql, [
      {
        seq,
        outcome: "failed",
        attempts: 1,
        lastStatus: 503,
        lastError: "the receiver answered 503",
        createdAt: Date.now(),
        settledAt: Date.now(),
        attemptLog: [],
      },
    ]);
  });
  return endpointId;
}

/** A live named operator's token, and a session of the operators' console it signed in. */
async function operatorTokenAndSession(): Promise<{ operatorToken: string; operatorCookie: string }> {
  const operatorToken = await namedOperator();
  const response = await send(env, "/admin/session", {
    method: "POST",
    headers: { Authorization: `Bearer ${operatorToken}`, Origin: ORIGIN },
  });
  expect(response.status, "an operators' console sign-in").toBe(201);
  return { operatorToken, operatorCookie: response.headers.get("Set-Cookie")!.split(";")[0]! };
}

/** A live operator of the operators' table that operations name in their path: its name. */
async function namedOperatorName(): Promise<string> {
  const name = `subject-${next()}`;
  await env.DB.prepare(INSERT_OPERATOR)
    .bind(name, await sha256Hex(crypto.randomUUID()), new Date().toISOString(), "cli:matrix")
    .run();
  return name;
}

/** An operator of the operators' table (npm run keys -- operator add), revoked at `revokedAt` if given: its token. */
async function namedOperator(revokedAt?: string): Promise<string> {
  const token = `so_op_matrix_${next()}_${crypto.randomUUID()}`;
  await env.DB.prepare(INSERT_OPERATOR)
    .bind(`matrix-${next()}`, await sha256Hex(token), new Date().toISOString(), "cli:matrix")
    .run();
  if (revokedAt)
    await env.DB.prepare("UPDATE operators SET revoked_at = ?1, revoked_by = 'cli:matrix' WHERE token_digest = ?2")
      .bind(revokedAt, await sha256Hex(token))
      .run();
  return token;
}

/** The operation's request against a world: path parameters by name, a body where it needs one. */
function requestOf(base: string, operation: Operation, world: World): { path: string; method: string; body?: string } {
  const ids: Record<string, string> = {
    orderId: world.orderId,
    endpointId: world.endpointId,
    deliveryId: world.deliveryId,
    keyId: world.other.record.id,
    petId: "1",
    host: "never-locked.example",
    partner: "github",
    name: world.subjectOperator,
  };
  const path = (base + operation.path).replace(/\{(\w+)\}/g, (_, name: string) => ids[name]!);
  const bodies: Record<string, unknown> = {
    createWebhookEndpoint: { url: `https://receiver.example/made-${next()}` },
    updateWebhookEndpoint: { types: ["order.cancelled"] },
    recoverWebhookDeliveries: { since: "2000-01-01T00:00:00Z" },
    redeemConsoleLink: { token: "A".repeat(43) },
    redeemOperatorLink: { token: "A".repeat(43) },
    raiseEventSequence: { atLeast: "0" },
    setBudgetLimits: LIMITS,
    createKey: { plan: "free" },
    updateKey: { name: `renamed-${next()}` },
    addOperator: { name: `added-${next()}` },
    lockHost: { host: `locked-${next()}.example` },
    unbanAddressGroup: { group: "198.51.100.1" },
  };
  const body = bodies[operation.operationId];
  return {
    path: path || "/",
    method: operation.method.toUpperCase(),
    ...(body !== undefined && { body: JSON.stringify(body) }),
  };
}

/** The headers a column's caller sends. */
function headersOf(column: Column, world: World): Record<string, string> {
  const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
  switch (column) {
    case "owner":
      return bearer(world.owner.key);
    case "none":
      return {};
    case "malformed":
      return bearer("not-a-key");
    case "other budget":
      return bearer(world.stranger.key);
    case "lacks scope":
      return bearer(world.lacking.key);
    case "expired":
      return bearer(world.expired.key);
    case "revoked":
      return bearer(world.revoked.key);
    case "grace":
      return bearer(world.grace.key);
    case "expiring":
      return bearer(world.expiring.key);
    case "cookie":
      return { Cookie: world.cookie, Origin: ORIGIN };
    case "cookie, no Origin":
      return { Cookie: world.cookie };
    case "cookie, other budget":
      return { Cookie: world.strangerCookie, Origin: ORIGIN };
    case "ended":
      return { Cookie: world.endedCookie, Origin: ORIGIN };
    case "operator":
      return bearer(OPERATOR_TOKEN);
    case "named operator":
      return bearer(world.operatorToken);
    case "revoked operator":
      return bearer(world.revokedOperatorToken);
    case "operator session":
      return { Cookie: world.operatorCookie, Origin: ORIGIN };
    case "operator session, no Origin":
      return { Cookie: world.operatorCookie };
    case "Access operator":
      return { "Cf-Access-Jwt-Assertion": world.accessAssertion };
  }
}

/** Where the Access column's deployment is: behind an Access application of this team and audience. */
const ACCESS_TEAM = "matrix.cloudflareaccess.com";
const ACCESS_AUD = "7".repeat(64);
let accessSigner: { privateKey: CryptoKey; jwks: unknown } | undefined;

/** An assertion as Access signs one for a person, and the keys it publishes (made once a file). */
async function accessAssertion(): Promise<string> {
  if (!accessSigner) {
    const pair = (await crypto.subtle.generateKey(
      { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
      true,
      ["sign", "verify"],
    )) as CryptoKeyPair;
    const jwk = (await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey;
    accessSigner = {
      privateKey: pair.privateKey,
      jwks: { keys: [{ ...jwk, kid: "matrix", alg: "RS256", use: "sig" }] },
    };
  }
  return new SignJWT({ email: "matrix@example.com" })
    .setProtectedHeader({ alg: "RS256", kid: "matrix" })
    .setIssuer(`https://${ACCESS_TEAM}`)
    .setAudience(ACCESS_AUD)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(accessSigner.privateKey);
}

/**
 * Operations whose success uses up what the next cell needs, and how it is
 * made again after a cell that succeeded: the endpoint deleted, the session
 * ended (only the session a request came with ends). The rest of the world
 * stays, and a refusal used up nothing.
 */
const CONSUMING = new Map<string, (world: World) => Promise<World>>([
  [
    "deleteWebhookEndpoint",
    async (world) => {
      const endpointId = await endpointWithFailure(world.owner, world.seq);
      return { ...world, endpointId, deliveryId: deliveryIdOf(endpointId, world.seq) };
    },
  ],
  [
    "endConsoleSession",
    async (world) => ({ ...world, cookie: await signIn(world.owner), strangerCookie: await signIn(world.stranger) }),
  ],
  ["endOperatorSession", async (world) => ({ ...world, ...(await operatorTokenAndSession()) })],
  // A key is rotated once: the next cell names a key of the account not rotated yet.
  ...["rotateOwnKey", "rotateAnyKey"].map(
    (operationId) =>
      [
        operationId,
        async (world: World) => ({
          ...world,
          other: await storeTestKey({ plan: "enterprise", limits: LIMITS, scopes: ALL, budget: world.owner.record.id }),
        }),
      ] as const,
  ),
]);

/**
 * The row's client's address: a /64 of its own for each row, so no row's
 * refusals count toward another's (a row sends under 30 requests, half the
 * keyless minute's 60). One per row, not per request: each new /64 is a new
 * object, which was a third of the matrix's time.
 */
let rowAddress = "";

/** Sends a request as a client would, from the row's address. */
/** The background work of the row's requests so far, waited for once the row has its answers. */
let rowWork: (() => Promise<void>)[] = [];

async function send(bindings: Env, path: string, init: RequestInit): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("CF-Connecting-IP", rowAddress);
  if (init.body !== undefined) headers.set("Content-Type", "application/json");
  const context = recordingContext();
  const response = await worker.fetch(new Request(`${ORIGIN}${path}`, { ...init, headers }), bindings, context.ctx);
  // Its background work (a lease handed back, a nudge of the dispatcher) runs on; the row waits for it at its end.
  rowWork.push(context.settled);
  return response;
}

async function outcome(response: Response): Promise<string> {
  const text = await response.text();
  if (response.status < 400) return String(response.status);
  return `${response.status} ${(JSON.parse(text) as { code: string }).code}`;
}

export const operations = routes.flatMap(({ base, operations: each }) =>
  each.map((operation) => ({ base, operation })),
);

/** A row's name: the operation's method and path template (an operationId may be in both versions). */
export const rowOf = ({ base, operation }: { base: string; operation: Operation }) =>
  `${operation.method.toUpperCase()} ${base + operation.path || "/"}`;

/**
 * The matrix's rows that `select` takes, one test each, in a file of their
 * own: the rows are spread over several files, each with a runtime of its
 * own, so they run side by side (test/workers/app/authorization-matrix-*.test.ts).
 */
export function describeMatrixRows(title: string, select: (row: string) => boolean): void {
  describe(title, () => {
    beforeEach(() => {
      // A test event is POSTed: to a receiver that takes it, never to the network. Access's keys are published here.
      vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
        const url = input instanceof Request ? input.url : String(input);
        return url === `https://${ACCESS_TEAM}/cdn-cgi/access/certs`
          ? Response.json(accessSigner!.jwks)
          : new Response("ok");
      });
    });

    const rows = operations.filter((each) => select(rowOf(each)));
    it.each(rows.map(({ base, operation }) => [rowOf({ base, operation }), base, operation] as const))(
      "%s answers each kind of caller as its row says",
      async (row, base, operation) => {
        const { operationId } = operation;
        rowAddress = `2001:db8:${next().toString(16)}::1`;
        rowWork = [];
        // A dispatcher the Worker could not reach, in the background, is logged, not answered: the row fails on it.
        const logged: string[] = [];
        for (const level of ["warn", "error"] as const)
          vi.spyOn(console, level).mockImplementation((line: unknown) => void logged.push(String(line)));
        const expected = MATRIX[row]?.split("|").map((cell) => cell.trim());
        const actual: string[] = [];
        // One world a row: a success repeated (a cancel, a rotation, a revocation) answers alike, and refusals change
        // nothing.
        let world = await makeWorld(operation);
        for (const column of COLUMNS) {
          const renew = CONSUMING.get(operationId);
          if (renew && actual.at(-1)?.startsWith("2")) world = await renew(world);
          const { path, method, body } = requestOf(base, operation, world);
          const bindings =
            column === "Access operator"
              ? ({ ...withoutDispatcher(), ACCESS_TEAM_DOMAIN: ACCESS_TEAM, ACCESS_AUD } as Env)
              : withoutDispatcher();
          const response = await send(bindings, path, {
            method,
            headers: headersOf(column, world),
            ...(body !== undefined && { body }),
          });
          actual.push(await outcome(response));
        }
        await Promise.all(rowWork.map((settled) => settled()));
        expect(logged.filter((line) => /dispatcher/.test(line))).toEqual([]);
        // A retry or a recovery made the world's delivery due: its lane is stopped, so it posts nothing once the test
        // is over.
        if (world.endpointId !== NO_ENDPOINT)
          await runInDurableObject(laneOf(env, world.endpointId), (_, state) => state.storage.deleteAlarm());
        // A new operation's row is reviewed like code: the failure shows what it answered, to be checked cell by cell.
        expect(expected, `no row for ${row}; it answered: "${actual.join(" | ")}"`).toBeDefined();
        expect(expected!.length, `${row}'s row has a cell for each of ${COLUMNS.length} callers`).toBe(COLUMNS.length);
        expect(actual.join(" | ")).toBe(expected!.join(" | "));
      },
      ROW_TIMEOUT_MS,
    );
  });
}

/**
 * The Idempotency-Key on the rows `select` takes (docs/api.md#retrying-safely): every write that takes one, sent
 * twice by the owner's key and twice by its console session, answers the second time what it answered the first,
 * marked replayed (a 5xx or 429 is not kept); an operation that takes none never says it replayed.
 */
export function describeIdempotencyRows(title: string, select: (row: string) => boolean): void {
  describe(title, () => {
    beforeEach(() => {
      vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    });
    const rows = operations.filter((each) => select(rowOf(each)) && !each.operation.operator);
    it.each(rows.map(({ base, operation }) => [rowOf({ base, operation }), base, operation] as const))(
      "%s: a retry with the same Idempotency-Key gets the first answer again, or takes none",
      async (_row, base, operation) => {
        rowAddress = `2001:db8:${next().toString(16)}::1`;
        rowWork = [];
        const world = await makeWorld(operation);
        for (const column of ["owner", "cookie"] as const) {
          const { path, method, body } = requestOf(base, operation, world);
          const once = () =>
            send(withoutDispatcher(), path, {
              method,
              headers: { ...headersOf(column, world), "Idempotency-Key": `${column}-${operation.operationId}` },
              ...(body !== undefined && { body }),
            });
          const first = await once();
          const firstBody = await first.text();
          const second = await once();
          if (!operation.idempotent) {
            expect(second.headers.get("Idempotent-Replayed"), column).toBeNull();
            continue;
          }
          if (first.status >= 500 || first.status === 429) continue;
          // Signing out ends the cookie it came with: its retry is refused by the guard, before anything kept.
          if (operation.operationId === "endConsoleSession" && column === "cookie" && first.status === 204) {
            expect((JSON.parse(await second.text()) as { code: string }).code).toBe("session_ended");
            continue;
          }
          expect([column, second.status, second.headers.get("Idempotent-Replayed")]).toEqual([
            column,
            first.status,
            // An answer the key's guard gave (the cookie column's refusal on a key-only route) is not the write's.
            first.status === 401 || first.status === 403 ? null : "true",
          ]);
          if (second.headers.get("Idempotent-Replayed")) expect(await second.text()).toBe(firstBody);
        }
        await Promise.all(rowWork.map((settled) => settled()));
        if (world.endpointId !== NO_ENDPOINT)
          await runInDurableObject(laneOf(env, world.endpointId), (_, state) => state.storage.deleteAlarm());
      },
      ROW_TIMEOUT_MS,
    );
  });
}

/**
 * A row's time on a busy machine: seventeen requests, and for a consuming operation what each cell used up made again.
 */
const ROW_TIMEOUT_MS = 60_000;
