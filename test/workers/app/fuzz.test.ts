import { fc, test } from "@fast-check/vitest";
import { beforeAll, describe, expect } from "vitest";
import { ERROR_STATUS } from "../../../src/framework/api-error";
import { api, errorBodyOf } from "../../support/request";
import { clearOrders, seedOrders } from "../../support/seed";

// 60 requests per property: the generators are small spaces (ids, paths, headers) that 60 runs cover broadly;
// each run is a full request through keys, limits and D1.
const RUNS = { numRuns: 60 };
// Each run is a request through keys, limits and D1: seconds per property, not milliseconds.
const TIMEOUT = 120_000;
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND", "purge"];

/** Every non-success answer is the Error shape, with a code from the contract's table and that code's status. */
async function expectContractAnswer(response: Response, allowed: number[], method = "GET"): Promise<void> {
  expect(response.status).toBeLessThan(500);
  expect(allowed).toContain(response.status);
  if (response.status < 400 || method === "HEAD") return;
  const body = await errorBodyOf(response);
  expect(ERROR_STATUS[body.code as keyof typeof ERROR_STATUS]).toBe(response.status);
}

/** A string as a client's raw bytes would arrive in a header: UTF-8, read back as Latin-1. */
function asHeaderBytes(text: string): string {
  return String.fromCharCode(...new TextEncoder().encode(text)).replace(/[\0\r\n]/g, "");
}

const int64ish = fc.oneof(
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
  fc.integer({ min: -3, max: 8 }).map(String),
  fc.constantFrom("007", "-0", "1.5", "1e3", "0x10", " 1", "+1", "9223372036854775808", "%00", ".."),
);
const anyId = fc.oneof(
  int64ish,
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 200 }),
);

beforeAll(async () => {
  await clearOrders();
  await seedOrders([
    { id: 1 },
    { id: 2, status: "shipped" },
    { id: 3, status: "delivered" },
    { id: 4, status: "cancelled" },
    { id: "9223372036854775807" },
  ]);
});

describe("fuzzed ids", () => {
  test.prop([anyId], RUNS)(
    "DELETE /v1/store/orders/{orderId} answers only 204, 400, 404 or 409",
    async (id) => {
      await expectContractAnswer(
        await api(`/v1/store/orders/${encodeURIComponent(id)}`, { method: "DELETE" }),
        [204, 400, 404, 409],
      );
    },
    TIMEOUT,
  );

  test.prop([anyId], RUNS)(
    "GET /v1/pets/{petId} answers only 200, 400, 404 or 410",
    async (id) => {
      await expectContractAnswer(await api(`/v1/pets/${encodeURIComponent(id)}`), [200, 400, 404, 410]);
    },
    TIMEOUT,
  );
});

describe("fuzzed paths and methods", () => {
  const segment = fc.oneof(
    fc.constantFrom("v1", "v2", "store", "orders", "pets", "openapi.json", "", "..", "%2F", "%00", "v1%2Fstore"),
    fc.string({ unit: "grapheme", maxLength: 12 }).map(encodeURIComponent),
  );
  const path = fc.array(segment, { minLength: 1, maxLength: 6 }).map((segments) => `/${segments.join("/")}`);
  const body = fc.option(fc.string({ maxLength: 2000 }), { nil: undefined });

  test.prop([fc.constantFrom(...METHODS), path, body], RUNS)(
    "never answer 5xx, and errors have the Error shape",
    async (method, target, text) => {
      const withBody = text !== undefined && !["GET", "HEAD"].includes(method.toUpperCase());
      const response = await api(target, { method, ...(withBody && { body: text }) });
      await expectContractAnswer(response, [200, 204, 304, 400, 401, 404, 405, 409, 410], method.toUpperCase());
    },
    TIMEOUT,
  );
});

describe("fuzzed Authorization headers", () => {
  const token = fc.oneof(
    fc.string({ unit: "binary", maxLength: 64 }).map(asHeaderBytes),
    fc.stringMatching(/^so_(live|test)_[0-9A-Za-z]{28,36}$/),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }).map(asHeaderBytes),
    fc.integer({ min: 1_000, max: 16_000 }).map((length) => "A".repeat(length)),
  );
  const authorization = fc.oneof(
    token.map((t) => `Bearer ${t}`),
    token.map((t) => `bearer  ${t}`),
    token,
    fc.tuple(fc.constantFrom("Basic", "Token", "Bearer,", "Digest"), token).map(([scheme, t]) => `${scheme} ${t}`),
  );
  const noise = fc.dictionary(
    fc.stringMatching(/^x-[a-z0-9-]{1,20}$/),
    fc.string({ unit: "binary", maxLength: 100 }).map(asHeaderBytes),
    { maxKeys: 40 },
  );

  test.prop([authorization, noise], RUNS)(
    "get 401 (or 429), never 5xx, and are never echoed back",
    async (header, extra) => {
      const response = await api("/v1/store/orders", { headers: { ...extra, Authorization: header } });
      const body = await response.clone().text();
      await expectContractAnswer(response, [401, 429]);
      const secret = header.trim().split(/\s+/).at(-1) ?? "";
      if (secret.length >= 12) {
        expect(body).not.toContain(secret);
        expect([...response.headers].some(([, value]) => value.includes(secret))).toBe(false);
      }
    },
    TIMEOUT,
  );
});
