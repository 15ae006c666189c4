import { Hono } from "hono";
import type { AppEnv } from "./env";
import { identifyCaller } from "./middleware/auth";
import { corsPolicy } from "./middleware/cors";
import { handleError, handleNotFound } from "./middleware/errors";
import { rateLimit } from "./middleware/rate-limit";
import { requestId } from "./middleware/request-id";
import { operations } from "./routes";
import { mountOperations } from "./routes/operation";
import { describeService } from "./routes/service";

const v1 = new Hono<AppEnv>();
mountOperations(v1, operations);

const app = new Hono<AppEnv>();
// CORS answers preflights before anything else; every other request is
// counted, keyed or not, so even 401s and 404s carry limits.
app.use(requestId(), corsPolicy(), identifyCaller(), rateLimit());
app.get("/", describeService(operations));
app.route("/v1", v1);
app.notFound(handleNotFound);
app.onError(handleError);

export default app;

export { RateLimiter } from "./limiter/rate-limiter";
