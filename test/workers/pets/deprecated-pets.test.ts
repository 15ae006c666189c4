import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { api, errorBodyOf } from "../../support/request";

const DEPRECATED_AT = Date.parse(env.PETS_DEPRECATED_AT);
const SUNSET_AT = Date.parse(env.PETS_SUNSET_AT);

async function seedPets(): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("DELETE FROM pets"),
    env.DB.prepare("INSERT INTO pets (id, name, status) VALUES (1, 'Rex', 'available'), (2, 'Nameless status', NULL)"),
    env.DB.prepare("INSERT INTO pets (id, name) VALUES ('9223372036854775807', 'Max')"),
  ]);
}

beforeEach(async () => {
  await seedPets();
  vi.useFakeTimers({ toFake: ["Date"] });
});
afterEach(() => vi.useRealTimers());

describe("GET /v1/pets/{petId} before its sunset", () => {
  beforeEach(() => vi.setSystemTime(SUNSET_AT - 1000));

  it("returns the pet with Deprecation, Sunset and Link headers", async () => {
    const response = await api("/v1/pets/1");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ id: 1, name: "Rex", status: "available" });
    expect(response.headers.get("Deprecation")).toBe(`@${DEPRECATED_AT / 1000}`);
    expect(response.headers.get("Sunset")).toBe(new Date(SUNSET_AT).toUTCString());
    // The operation's section of the reference page, a page for people (RFC 9745).
    expect(response.headers.get("Link")).toBe(
      `<${env.BASE_URL}/docs#tag/pets/GET/pets/%7BpetId%7D>; rel="deprecation"; type="text/html"`,
    );
  });

  it("writes the headers in their exact syntax", async () => {
    const response = await api("/v1/pets/1");
    expect(response.headers.get("Deprecation")).toMatch(/^@\d+$/);
    // RFC 9110 IMF-fixdate, e.g. "Tue, 01 Jun 2027 00:00:00 GMT".
    expect(response.headers.get("Sunset")).toMatch(
      new RegExp(
        "^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \\d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) " +
          "\\d{4} \\d{2}:\\d{2}:\\d{2} GMT$",
      ),
    );
    expect(response.headers.get("Link")).toMatch(/^<https?:\/\/[^>]+>; rel="deprecation"; type="text\/html"$/);
  });

  it("omits an absent status and keeps int64 ids exact", async () => {
    expect(await (await api("/v1/pets/2")).text()).toBe('{"id":2,"name":"Nameless status"}');
    expect(await (await api("/v1/pets/9223372036854775807")).text()).toBe('{"id":9223372036854775807,"name":"Max"}');
  });

  it("answers 404 pet_not_found, still with the deprecation headers", async () => {
    const response = await api("/v1/pets/404");
    expect(await errorBodyOf(response)).toMatchObject({ code: "pet_not_found", status: 404 });
    expect(response.headers.get("Sunset")).not.toBeNull();
  });

  it.each(["abc", "1.5", "007", "9223372036854775808", ""])("answers 400 invalid_pet_id for %j", async (id) => {
    expect(await errorBodyOf(await api(`/v1/pets/${id}`))).toMatchObject({ code: "invalid_pet_id", status: 400 });
  });

  it("needs a key and is rate limited like everything else", async () => {
    const response = await api("/v1/pets/1", { key: null });
    expect((await errorBodyOf(response)).code).toBe("missing_api_key");
    expect(response.headers.get("X-RateLimit-Limit")).toBe("60");
  });
});

describe("GET /v1/pets/{petId} from its sunset on", () => {
  it.each([0, 86_400_000 * 400])("answers 410 endpoint_sunset with the same headers (%i ms after)", async (after) => {
    vi.setSystemTime(SUNSET_AT + after);
    const response = await api("/v1/pets/1");
    expect(await errorBodyOf(response)).toMatchObject({ code: "endpoint_sunset", status: 410 });
    expect(response.headers.get("Deprecation")).toBe(`@${DEPRECATED_AT / 1000}`);
    expect(response.headers.get("Sunset")).toBe(new Date(SUNSET_AT).toUTCString());
    expect(response.headers.get("Link")).toContain('rel="deprecation"');
  });
});
