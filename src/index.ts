import { Hono } from "hono";
import type { AppEnv } from "./env";
import { identifyCaller, requireApiKey } from "./middleware/auth";
import { handleError, handleNotFound } from "./middleware/errors";
import { requestId } from "./middleware/request-id";
import { operations } from "./routes";
import { mountOperations } from "./routes/operation";
import { describeService } from "./routes/service";

const v1 = new Hono<AppEnv>();
v1.use(identifyCaller(), requireApiKey());
mountOperations(v1, operations);

const app = new Hono<AppEnv>();
app.use(requestId());
app.get("/", describeService(operations));
app.route("/v1", v1);
app.notFound(handleNotFound);
app.onError(handleError);

export default app;
