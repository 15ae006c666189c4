import { app } from "../../src/app/worker";

/**
 * Every route the app serves, as method and OpenAPI path template: its
 * method-specific routes (Hono lists one entry per handler of a route), not
 * the 405 fallbacks, the middleware that runs for every method, or the
 * empty-last-segment paths that only lead a missing id to its 400
 * (src/framework/operations/mount-routes.ts).
 */
export function servedRoutes(): { method: string; path: string }[] {
  const routes = app.routes
    .filter((route) => route.method !== "ALL" && !(route.path.endsWith("/") && route.path !== "/"))
    .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`);
  return [...new Set(routes)].map((route) => {
    const [method, path] = route.split(" ") as [string, string];
    return { method, path };
  });
}

/** One request of every kind of outcome: a list, a cancel, a bad id, a missing method, an unknown path. */
export const EVERY_OUTCOME: [method: string, path: string][] = [
  ["GET", "/v1/store/orders"],
  ["DELETE", "/v1/store/orders/1"],
  ["DELETE", "/v1/store/orders/abc"],
  ["POST", "/v1/store/orders"],
  ["GET", "/v1/nope"],
];
