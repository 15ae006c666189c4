import { idempotency } from "../idempotency/idempotency-key";
import { Hono, type MiddlewareHandler } from "hono";
import { describeServiceOperation } from "../framework/documents/describe-service";
import { allowedMethods, mountRoutes, type AccessGuards, type RouteGroup } from "../framework/operations/mount-routes";
import type { AppEnv } from "../framework/app-env";
import { pruneOrderEvents } from "../events/prune-order-events";
import { dispatcherOf } from "../webhook-delivery/dispatcher-calls";
import { pruneEndpointAudit } from "../webhook-delivery/endpoint-audit-rows";
import { pruneNotices } from "../webhook-delivery/endpoint-notices";
import { configOf } from "../framework/middleware/load-config";
import { isolateMemory } from "./isolate-memory";
import { consolePageOperation } from "../console/console-page";
import { operatorConsolePageOperation } from "../operator/console/operator-console-page";
import { consoleSessionCredential } from "../console/console-sessions";
import { pruneConsoleSessions } from "../console/session-table";
import { pruneOperatorSessions } from "../operator/operator-sessions";
import { countedCallers } from "../keys/counted-callers";
import { identifyCaller } from "../keys/identify-caller";
import type { OtherCredential } from "../keys/caller";
import { requestParty } from "../keys/request-party";
import { corsPolicy } from "../framework/middleware/cors";
import { handleError, handleNotFound } from "../framework/middleware/error-handler";
import { loadConfig } from "../framework/middleware/load-config";
import { rateLimit } from "../account/rate-limit";
import { REPLAY_LAYER, replayRefusal } from "../account/rate-limit";
import { responseIdentity } from "../framework/middleware/response-identity";
import { requestLog } from "../framework/middleware/request-log";
import { operatorApiAvailable, operatorCredential, requireOperator } from "../operator/require-operator";
import { OPERATOR_PREFIX, operatorOperations } from "./operator-operations";
import { API_VERSIONS } from "../framework/service-identity";
import { reportLeakedTokens, SECRET_SCANNING_PATH } from "../revocation/report-leaked-tokens";
import { secretScanningCredential } from "../revocation/scanning-credential";
import { operations as v1 } from "./v1-operations";
import { operations as v2 } from "./v2-operations";

const versions: RouteGroup[] = [
  { base: API_VERSIONS.v1.prefix, operations: v1, version: API_VERSIONS.v1 },
  { base: API_VERSIONS.v2.prefix, operations: v2, version: API_VERSIONS.v2 },
];
/** The operator API exists where its token is set or Access guards it; invalid vars answer 503 anyway. */
const operatorApi = (env: Env) => {
  const config = configOf(env, isolateMemory.configs);
  return operatorApiAvailable(env, config.ok ? config.config : undefined);
};
/**
 * Every route the worker serves, one way: `GET /` and the two consoles, each version's operations, the operator API.
 */
const routes: RouteGroup[] = [
  {
    base: "",
    operations: [
      describeServiceOperation(versions),
      consolePageOperation,
      operatorConsolePageOperation,
      reportLeakedTokens,
    ],
  },
  ...versions,
  { base: OPERATOR_PREFIX, operations: operatorOperations, available: operatorApi },
];

/**
 * A request's credential other than a key, by where it goes: under the operator API the operator's, at the secret
 * scanning endpoint GitHub's signature, anywhere else the callers' session. Never the other, so an operator's visit
 * never spends a caller's account.
 */
const credentialFor =
  (callers: OtherCredential, operators: OtherCredential, scanner: OtherCredential): OtherCredential =>
  async (c, address) => {
    if (c.req.path === SECRET_SCANNING_PATH) return scanner(c, address);
    if (c.req.path === OPERATOR_PREFIX || c.req.path.startsWith(`${OPERATOR_PREFIX}/`)) return operators(c, address);
    // A key in the header wins over a cookie: an API client never rides on a browser's session.
    return c.req.header("Authorization") === undefined ? callers(c, address) : undefined;
  };

/** How callers are counted and known again: keys by their accounts, everyone else by address group. */
const callers = countedCallers();

/** What every request passes through, in order, named for the bench; even 401s and 404s are counted. */
export const perRequestChain: readonly (readonly [name: string, handler: MiddlewareHandler<AppEnv>])[] = [
  ["request id and version", responseIdentity()],
  ["request log and analytics point", requestLog(requestParty)],
  [REPLAY_LAYER, replayRefusal(isolateMemory.leases, callers, isolateMemory.refusals, isolateMemory.refusalHeaders)],
  ["CORS", corsPolicy(allowedMethods(routes))],
  ["configuration", loadConfig(isolateMemory.configs)],
  [
    "caller: key digest and lookup",
    identifyCaller(
      isolateMemory.apiKeys,
      credentialFor(
        consoleSessionCredential(),
        operatorCredential(
          isolateMemory.accessKeys,
          isolateMemory.endedOperatorSessions,
          isolateMemory.operatorTokens,
          isolateMemory.leases,
        ),
        secretScanningCredential(isolateMemory.githubKeys, isolateMemory.answeredReports, isolateMemory.leases),
      ),
    ),
  ],
  [
    "rate limit: lease, headers, refusal",
    rateLimit(isolateMemory.leases, callers, isolateMemory.refusals, isolateMemory.refusalHeaders),
  ],
];

/** How an operator's access is checked (a token, or Cloudflare Access); a key's is the rate limit step's. */
export const accessGuards: AccessGuards = {
  operator: () => requireOperator(isolateMemory.accessKeys, isolateMemory.endedOperatorSessions),
  idempotency,
};

const app = new Hono<AppEnv>();
app.use(...perRequestChain.map(([, handler]) => handler));
mountRoutes(app, routes, accessGuards);
app.notFound(handleNotFound);
app.onError(handleError);

/**
 * The Worker: the HTTP API and the consoles; and, every minute, the prunes (order events, endpoints' audit, notices,
 * sessions) and the webhook dispatcher woken should its alarm be lost
 * (docs/design/order-events.md#the-dispatcher-never-stops).
 */
export default {
  fetch: app.fetch,
  scheduled(controller, env, ctx) {
    const config = configOf(env, isolateMemory.configs);
    if (config.ok)
      ctx.waitUntil(pruneOrderEvents(env.DB, controller.scheduledTime, config.config.orderEventsBudgetBytes));
    ctx.waitUntil(pruneEndpointAudit(env.DB, controller.scheduledTime));
    ctx.waitUntil(pruneNotices(env.DB, controller.scheduledTime));
    ctx.waitUntil(pruneConsoleSessions(env.DB, controller.scheduledTime));
    ctx.waitUntil(pruneOperatorSessions(env.DB, controller.scheduledTime));
    ctx.waitUntil(dispatcherOf(env).wake());
  },
} satisfies ExportedHandler<Env>;

/** The HTTP API alone, for the bench and the tests; its route table, for the authorization matrix. */
export { app, routes };

export { Account } from "../account/account";
export { WebhookDispatcher } from "../webhook-delivery/dispatcher-object";
export { WebhookLane } from "../webhook-delivery/lane-object";
