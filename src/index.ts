import { Hono } from "hono";
import { allowedMethods, mountOperations } from "./api/operation";
import { describeService } from "./api/service";
import { REFERENCE_PATH, referencePage } from "./api/reference-page";
import type { AppEnv } from "./env";
import { identifyCaller } from "./middleware/auth";
import { loadConfig } from "./middleware/config";
import { corsPolicy } from "./middleware/cors";
import { handleError, handleNotFound } from "./middleware/errors";
import { rateLimit } from "./middleware/rate-limit";
import { requestId } from "./middleware/request-id";
import { requestLog } from "./middleware/request-log";
import { operations } from "./operations";
import { mountOperatorApi } from "./operator/routes";
import { VERSION_PREFIX } from "./service";

const app = new Hono<AppEnv>();
// CORS answers preflights before anything else; every other request is
// counted, keyed or not, so even 401s and 404s carry limits.
app.use(
  requestId(),
  requestLog(),
  corsPolicy(allowedMethods(VERSION_PREFIX, operations)),
  loadConfig(),
  identifyCaller(),
  rateLimit(),
);
app.get("/", describeService(operations));
app.get(REFERENCE_PATH, referencePage());
mountOperations(app, VERSION_PREFIX, operations);
mountOperatorApi(app);
app.notFound(handleNotFound);
app.onError(handleError);

export default app;

export { RateLimiter } from "./limiter/rate-limiter";
