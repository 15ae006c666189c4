import { describe, expect, it } from "vitest";
import { EXPOSED } from "../../../src/framework/header-catalogue";
import { api, errorBodyOf } from "../../support/request";

describe("CORS", () => {
  it("answers a preflight without a key, without rate-limit headers", async () => {
    const response = await api("/v1/store/orders/1", {
      method: "OPTIONS",
      key: null,
      headers: {
        Origin: "https://shop.example",
        "Access-Control-Request-Method": "DELETE",
        "Access-Control-Request-Headers": "authorization, x-d1-bookmark",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(response.headers.get("Access-Control-Allow-Methods")).toContain("DELETE");
    expect(response.headers.get("Access-Control-Allow-Headers")?.toLowerCase()).toContain("authorization");
    expect(response.headers.get("Access-Control-Allow-Headers")?.toLowerCase()).toContain("x-d1-bookmark");
    expect(response.headers.get("X-RateLimit-Limit")).toBeNull();
  });

  it.each([
    ["/v1/store/orders", "GET,HEAD,OPTIONS"],
    ["/v1/store/orders/42", "DELETE,OPTIONS"],
    ["/v1/pets/1", "GET,HEAD,OPTIONS"],
    ["/v1/openapi.json", "GET,HEAD,OPTIONS"],
    ["/v1/store/orders/42/extra", null],
  ])("answers a preflight for %s with that path's methods: %s", async (path, methods) => {
    const response = await api(path, {
      method: "OPTIONS",
      key: null,
      headers: { Origin: "https://shop.example", "Access-Control-Request-Method": "GET" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("Access-Control-Allow-Methods")).toBe(methods);
  });

  it("lets browser code read every rate-limit, retry, id, cache, deprecation and bookmark header", async () => {
    const response = await api("/v1/store/orders", { headers: { Origin: "https://shop.example" } });
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const exposed = (response.headers.get("Access-Control-Expose-Headers") ?? "")
      .split(/,\s*/)
      .map((h) => h.toLowerCase());
    for (const header of [
      "X-RateLimit-Limit",
      "X-RateLimit-Remaining",
      "X-RateLimit-Reset",
      "X-RateLimit-Resource",
      "RateLimit",
      "RateLimit-Policy",
      "Retry-After",
      "X-Request-Id",
      "ETag",
      "Deprecation",
      "Sunset",
      "Link",
      "X-D1-Bookmark",
    ]) {
      expect(exposed).toContain(header.toLowerCase());
    }
  });

  it.each([
    ["/v1/store/orders", "GET, HEAD, OPTIONS"],
    ["/v1/store/orders/42", "DELETE, OPTIONS"],
    ["/v1", "GET, HEAD, OPTIONS"],
    ["/v2/webhook-endpoints", "POST, GET, HEAD, OPTIONS"],
  ])(
    "answers a plain OPTIONS (no Access-Control-Request-Method) for %s with 204 and Allow: %s, without a key",
    async (path, allow) => {
      const response = await api(path, { method: "OPTIONS", key: null });
      expect(response.status).toBe(204);
      expect(response.headers.get("Allow")).toBe(allow);
      expect(response.headers.get("Access-Control-Allow-Methods")).toBeNull();
      expect(await response.text()).toBe("");
      const preflight = await api(path, {
        method: "OPTIONS",
        key: null,
        headers: { Origin: "https://shop.example", "Access-Control-Request-Method": "GET" },
      });
      expect(preflight.headers.get("Access-Control-Allow-Methods")).toBe(allow.replaceAll(", ", ","));
    },
  );

  it("answers a plain OPTIONS for a path no operation serves 404 not_found", async () => {
    expect(await errorBodyOf(await api("/v1/store/orders/42/extra", { method: "OPTIONS", key: null }))).toMatchObject({
      code: "not_found",
      status: 404,
    });
  });

  it("exposes exactly the headers the catalogue marks readable, a 201's Location among them", async () => {
    const response = await api("/v1/store/orders", { headers: { Origin: "https://shop.example" } });
    const exposed = (response.headers.get("Access-Control-Expose-Headers") ?? "").split(",");
    expect(exposed).toEqual(EXPOSED);
    expect(exposed).toContain("Location");
  });

  it("sends CORS headers on errors too", async () => {
    const response = await api("/v1/store/orders", { key: null, headers: { Origin: "https://shop.example" } });
    expect(response.status).toBe(401);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
  });
});
