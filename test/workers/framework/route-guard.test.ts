import { describe, expect, it } from "vitest";
import { api } from "../../support/request";
import { servedRoutes } from "../../support/routes";

/** The only routes served without an API key (docs/api.md#authentication); everything else must refuse with 401. */
const PUBLIC = [
  "GET /",
  "GET /console",
  "GET /operator",
  "GET /v1",
  "GET /v1/openapi.json",
  "GET /v1/docs",
  "GET /v2",
  "GET /v2/openapi.json",
  "GET /v2/docs",
];
/**
 * A public operation that takes a body: its token is the credential (docs/api.md#the-console), so without one it
 * answers what a bodiless request gets.
 */
const PUBLIC_WITH_A_BODY = { "POST /v2/console/session/link": 415, "POST /admin/session/link": 415 } as Record<
  string,
  number
>;
/**
 * A route whose credential is a partner's signature, not a key (docs/operations.md#secret-scanning): without one, 401
 * saying so.
 */
const SIGNED = { "POST /secret-scanning/github": "invalid_signature" } as Record<string, string>;

/** Every route the app serves, as "METHOD /path" with parameters filled in. */
const callableRoutes = () => servedRoutes().map(({ method, path }) => `${method} ${path.replace(/\{\w+\}/g, "1")}`);

describe("every route is behind an API key unless documented as public", () => {
  it("finds the routes it guards (so an empty list cannot pass)", () => {
    expect(callableRoutes()).toEqual(
      expect.arrayContaining(["GET /v1/store/orders", "DELETE /v1/store/orders/1", "GET /v1/pets/1", ...PUBLIC]),
    );
  });

  it.each(callableRoutes())("%s", async (route) => {
    const [method, path] = route.split(" ") as [string, string];
    const response = await api(path, { method, key: null });
    if (PUBLIC.includes(route)) expect(response.status).toBe(200);
    else if (route in PUBLIC_WITH_A_BODY) expect(response.status).toBe(PUBLIC_WITH_A_BODY[route]);
    else {
      expect(response.status).toBe(401);
      expect(((await response.json()) as { code: string }).code).toBe(SIGNED[route] ?? "missing_api_key");
    }
  });
});
