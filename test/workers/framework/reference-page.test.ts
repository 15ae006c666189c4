import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { referenceLink } from "../../../src/framework/documents/reference-page";
import { api } from "../../support/request";

describe("GET /v1/docs", () => {
  it("serves the reference page to anyone, limited per address, under a strict Content-Security-Policy", async () => {
    const response = await api("/v1/docs", { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("text/html; charset=UTF-8");
    const policy = response.headers.get("Content-Security-Policy")!;
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toMatch(/script-src[^;]*unsafe/);
    expect(response.headers.get("X-RateLimit-Limit")).toBe("60");
    const html = await response.text();
    // Its script and the document from this origin, and no inline script.
    expect(html).toContain('<script src="/v1/docs/scalar.js"></script>');
    expect(html).toContain('data-url="/v1/openapi.json"');
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>[^<]/);
  });

  it("is the document's externalDocs", async () => {
    const document = await (await api("/v1/openapi.json")).json<{ externalDocs: { url: string } }>();
    expect(document.externalDocs.url).toBe(`${env.PRODUCTION_BASE_URL}/docs`);
  });

  it("links each operation's section by Scalar's anchor", () => {
    expect(referenceLink(env.BASE_URL, { tag: "Pets", method: "get", path: "/pets/{petId}" })).toBe(
      `${env.BASE_URL}/docs#tag/pets/GET/pets/%7BpetId%7D`,
    );
  });
});
