/**
 * The benchmark's worker: the real app, and beside it in the same isolate the
 * baselines it is measured against and two set-up routes. Only `npm run bench`
 * runs it (bench/wrangler.toml); it is never deployed.
 */
import { Hono, type MiddlewareHandler } from "hono";
import { putApiKey } from "../src/db/api-keys";
import app from "../src/index";
import type { AppEnv } from "../src/env";
import { ApiError } from "../src/errors";
import { generateApiKey, generateKeyId } from "../src/lib/api-key";
import { identifyCaller } from "../src/middleware/auth";
import { handleError } from "../src/middleware/errors";
import { requestId } from "../src/middleware/request-id";
import { mountOperations } from "../src/routes/operation";
import { listOrders } from "../src/routes/orders";
import type { ApiKeyRecord, Limits } from "../src/schemas/api-key";

export { RateLimiter } from "../src/index";

const bench = new Hono<AppEnv>();

// The runtime's limit: routing and a JSON response, nothing else.
bench.get("/bench/bare", (c) => c.json([]));

// The data baseline: the list operation exactly as the service runs it, without keys, limits or logs.
mountOperations(bench, "/bench/query", [{ ...listOrders, public: true }]);

// The peer: the same authenticated list, limited by Cloudflare's rate limiting binding instead of the Durable Object.
bench.use("/bench/peer/*", requestId(), identifyCaller(), peerRateLimit());
mountOperations(bench, "/bench/peer", [listOrders]);

/** Replaces every order with `count` pending ones, ids 1..count, in one statement. */
bench.post("/bench/seed", async (c) => {
  const count = Number(c.req.query("orders"));
  if (!Number.isInteger(count) || count < 0) return c.json({ error: "orders must be a count" }, 400);
  await c.env.DB.batch([
    c.env.DB.prepare("DELETE FROM orders"),
    c.env.DB.prepare(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, status, complete, created_at, updated_at)
       WITH RECURSIVE n(i) AS (SELECT 1 WHERE ?1 > 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
       SELECT i, i % 1000, 1 + i % 5, '2026-11-02T09:00:00.000Z', 'pending', 0,
              '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z' FROM n`,
    ).bind(count),
  ]);
  return c.json({ orders: count });
});

/** Stores two keys as `npm run keys` would: one with room for every request, one that is always limited. */
bench.post("/bench/keys", async (c) => {
  const store = async (limits: Limits) => {
    const key = generateApiKey("so_test_");
    const record: ApiKeyRecord = { id: generateKeyId(), plan: "enterprise", name: "bench", createdAt: new Date().toISOString(), limits };
    await putApiKey(c.env.API_KEYS, key, record);
    return key;
  };
  return c.json({
    roomy: await store({ perMinute: 1_000_000_000, perDay: 1_000_000_000 }),
    limited: await store({ perMinute: 1, perDay: 1_000_000_000 }),
  });
});

bench.onError(handleError);

function peerRateLimit(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const caller = c.get("caller");
    const { success } = await c.env.PEER_LIMITER.limit({ key: caller.kind === "key" ? caller.key.id : caller.address });
    if (!success) throw new ApiError("rate_limit_exceeded", "Refused by the peer rate limiter.");
    await next();
  };
}

export default {
  fetch(request, env, ctx) {
    const target = new URL(request.url).pathname.startsWith("/bench/") ? bench : app;
    return target.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
