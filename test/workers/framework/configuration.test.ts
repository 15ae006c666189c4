import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { apiWith, errorBodyOf } from "../../support/request";

afterEach(() => vi.restoreAllMocks());

/** A request with one var changed, and the lines the worker logged for it. */
async function withVar(name: string, value: string | undefined) {
  const errors: string[] = [];
  vi.spyOn(console, "error").mockImplementation((line: unknown) => void errors.push(String(line)));
  vi.spyOn(console, "log").mockImplementation(() => {});
  const response = await apiWith({ ...env, [name]: value } as Env, "/v1/store/orders");
  return { response, errors };
}

describe("invalid vars", () => {
  it.each([
    ["BAN_THRESHOLD", "2O"],
    ["BAN_SECONDS", "0"],
    ["BASE_URL", "http://localhost:8787/v2"],
    ["PETS_SUNSET_AT", "2020-01-01T00:00:00Z"],
    ["PETS_DEPRECATED_AT", "soon"],
    ["STAGING_BASE_URL", undefined],
  ])(
    "%s=%j makes the worker answer 503 and log an error naming it, rather than run with a default",
    async (name, value) => {
      const { response, errors } = await withVar(name, value);
      expect(response.status).toBe(503);
      expect(await errorBodyOf(response)).toMatchObject({ code: "service_unavailable" });
      expect(response.headers.get("Retry-After")).toMatch(/^\d+$/);
      expect(errors).toHaveLength(1);
      const line = JSON.parse(errors[0]!) as { level: string; error: string };
      expect(line.level).toBe("error");
      expect(line.error).toContain(`invalid configuration: ${name}`);
    },
  );

  it("are not needed for a CORS preflight, which serves no data", async () => {
    const response = await apiWith({ ...env, BAN_SECONDS: "x" } as Env, "/v1/store/orders", {
      method: "OPTIONS",
      headers: { Origin: "https://app.example", "Access-Control-Request-Method": "GET" },
    });
    expect(response.status).toBe(204);
  });

  it("serve with the committed values", async () => {
    const { response, errors } = await withVar("BAN_SECONDS", env.BAN_SECONDS);
    expect(response.status).toBe(200);
    expect(errors).toEqual([]);
  });
});
