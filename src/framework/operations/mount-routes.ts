import type { Context, Hono, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { ApiError } from "../api-error";
import type { AppEnv } from "../app-env";
import type { ApiVersion } from "../service-identity";
import { deprecation } from "../middleware/deprecation";
import { scopesOf, type Operation } from "./define-operation";
import type { KeyNeed } from "./scopes";
import { referenceLink } from "../documents/reference-page";

/** Operations served under one path prefix: `` for `GET /`, `/v1` and `/v2`, `/admin` for operators. */
export interface RouteGroup {
  base: string;
  operations: readonly Operation[];
  /** Set on a version of the API: what `GET /` says of it. */
  version?: ApiVersion;
  /** Set on a group only some deployments have: where it says no, every path of it is 404, preflights included. */
  available?: (env: Env) => boolean;
}

/** The guards an operation asks for, handed in by the app; a key's need is answered before them (matchRoute). */
export interface AccessGuards {
  /** Refuses a caller without the operator token; sets `operator`. */
  operator(): MiddlewareHandler<AppEnv>;
  /** An idempotent write's: answers a retry with the first answer, or lets the write run (after the access guard). */
  idempotency(): MiddlewareHandler<AppEnv>;
}

const notFound = () => new ApiError("not_found", "No such resource. See GET / for what this service offers.");

/** The guards an operation's description asks for, and its deprecation headers. */
function guardsOf(guards: AccessGuards, operation: Operation): MiddlewareHandler<AppEnv>[] {
  const access = operation.operator ? [guards.operator()] : [];
  if (operation.idempotent) access.push(guards.idempotency());
  const dates = operation.deprecation;
  if (!dates) return access;
  return [...access, deprecation((config) => ({ ...dates(config), link: referenceLink(config.baseUrl, operation) }))];
}

/**
 * The Hono paths of a path template: `{name}` becomes a parameter, and a trailing one also gets a path with it empty,
 * so `DELETE /store/orders/` gets the validator's 400, not 404. An empty segment mid-path is 404: the RegExpRouter
 * refuses a parameter that can match nothing.
 */
function honoPaths(path: string): string[] {
  const hono = path.replace(/\{(\w+)\}/g, ":$1");
  if (/\{\w+\}$/.test(path)) return [hono, path.replace(/\{\w+\}$/, "")];
  // A version's own path (`/v1`) is also asked for as a folder (`/v1/`), as its base URL is written with one.
  return TOP_LEVEL.test(path) ? [hono, `${hono}/`] : [hono];
}

/** A path of one segment: a group's base, or a page at the top (`/console`). */
const TOP_LEVEL = /^\/[^/]+$/;

/**
 * Routes every operation of every group, the one way any route is served: named by its path template for the request
 * log, behind its guards, every path answering the methods it lacks with 405 and `Allow`.
 */
export function mountRoutes(app: Hono<AppEnv>, groups: readonly RouteGroup[], guards: AccessGuards): void {
  for (const { base, available } of groups) {
    // Before the group's routes (and after the shared middleware): the 404 is counted and limited like any other.
    if (available) {
      app.use(`${base}/*`, async (c, next) => {
        if (!available(c.env)) throw notFound();
        await next();
      });
    }
  }
  for (const { base, operations } of groups) {
    for (const operation of operations) {
      const method = operation.method.toUpperCase();
      const handlers = [
        routeName(base + operation.path, needOf(operation)),
        ...guardsOf(guards, operation),
        ...operation.run,
      ];
      // Handlers registered for one route run in order, each passing on with next().
      for (const path of honoPaths(base + operation.path))
        for (const handler of handlers) app.on(method, path, handler);
    }
  }
  // Registered after every operation, so they only answer methods none of them took.
  for (const { base, operations } of groups) {
    for (const [path, methods] of methodsByPath(operations)) {
      const allow = methods.join(", ");
      const refuse = (c: Context<AppEnv>) => {
        throw new ApiError("method_not_allowed", `${c.req.method} is not allowed here. Allowed: ${allow}.`, {
          Allow: allow,
        });
      };
      for (const honoPath of honoPaths(base + path)) app.all(honoPath, routeName(base + path), refuse);
    }
  }
}

const ROUTE = Symbol("route");
type NamingHandler = MiddlewareHandler<AppEnv> & { [ROUTE]?: { route: string; need?: KeyNeed } };

function routeName(route: string, need?: KeyNeed): NamingHandler {
  const handler: NamingHandler = async (c, next) => {
    c.set("route", route);
    await next();
  };
  handler[ROUTE] = { route, ...(need && { need }) };
  return handler;
}

function needOf(operation: Operation): KeyNeed | undefined {
  if (operation.public || operation.operator) return undefined;
  return { scopes: scopesOf(operation), ...(operation.beyondItself && { beyondItself: operation.beyondItself }) };
}

/** What the matched route asks of a key, if any; such a route is named before its handlers run, for a 401's log. */
export function matchRoute(c: Context<AppEnv>): KeyNeed | undefined {
  for (const { handler } of matchedRoutes(c)) {
    const match = (handler as NamingHandler)[ROUTE];
    if (!match) continue;
    if (match.need) c.set("route", match.route);
    return match.need;
  }
  return undefined;
}

/** The methods each path template answers: its operations', HEAD with GET, and OPTIONS. */
function methodsByPath(operations: readonly Operation[]): Map<string, string[]> {
  const byPath = new Map<string, string[]>();
  for (const { path, method } of operations) byPath.set(path, [...(byPath.get(path) ?? []), method.toUpperCase()]);
  for (const [path, methods] of byPath)
    byPath.set(path, [...methods, ...(methods.includes("GET") ? ["HEAD"] : []), "OPTIONS"]);
  return byPath;
}

/** A path's methods (for `Allow` and preflights), empty for none; undefined in a group absent here. */
export function allowedMethods(groups: readonly RouteGroup[]): (path: string, env: Env) => string[] | undefined {
  const patterns = groups.flatMap(({ base, operations }) =>
    [...methodsByPath(operations)].map(([path, methods]) => {
      const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      const source =
        (base + path)
          .split(/\{\w+\}/)
          .map(literal)
          .join("[^/]*") + (TOP_LEVEL.test(base + path) ? "/?" : "");
      return { pattern: new RegExp(`^${source}$`), methods };
    }),
  );
  const optional = groups.filter((group) => group.available);
  return (path, env) => {
    if (optional.some(({ base, available }) => (path === base || path.startsWith(`${base}/`)) && !available!(env)))
      return undefined;
    return patterns.find(({ pattern }) => pattern.test(path))?.methods ?? [];
  };
}
