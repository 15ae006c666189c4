import { Hono } from "hono";
import { describeServiceOperation } from "./api/describe-service";
import { allowedMethods, mountRoutes, type RouteGroup } from "./api/mount-routes";
import type { AppEnv } from "./env";
import { isolateMemory } from "./isolate-memory";
import { identifyCaller } from "./middleware/api-key-auth";
import { corsPolicy } from "./middleware/cors";
import { handleError, handleNotFound } from "./middleware/error-handler";
import { loadConfig } from "./middleware/load-config";
import { rateLimit } from "./middleware/rate-limit";
import { requestId } from "./middleware/request-id";
import { requestLog } from "./middleware/request-log";
import { OPERATOR_PREFIX, operatorOperations } from "./operator/operator-routes";
import { VERSION_PREFIX } from "./service-identity";
import { operations as v1 } from "./v1-operations";

const versions: RouteGroup[] = [{ base: VERSION_PREFIX, operations: v1 }];
/** Every route the worker serves, one way: `GET /`, each version's operations, the operator API. */
const routes: RouteGroup[] = [{ base: "", operations: [describeServiceOperation(versions)] }, ...versions, { base: OPERATOR_PREFIX, operations: operatorOperations }];

const app = new Hono<AppEnv>();
// CORS answers preflights before anything else; every other request is
// counted, keyed or not, so even 401s and 404s carry limits.
app.use(
  requestId(),
  requestLog(),
  corsPolicy(allowedMethods(routes)),
  loadConfig(isolateMemory.configs),
  identifyCaller(isolateMemory.apiKeys),
  rateLimit(isolateMemory.leases),
);
mountRoutes(app, routes);
app.notFound(handleNotFound);
app.onError(handleError);

export default app;

export { RateLimiter } from "./limiter/rate-limiter";
