import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { openSecret } from "../../../src/webhook-delivery/webhook-secrets";
import { api, apiWith, errorBodyOf, ORIGIN } from "../../support/request";
import { storeTestKey, type TestKey } from "../../support/test-keys";

/**
 * The account's webhook endpoints (docs/api.md#webhook-endpoints), and the
 * operator's view of every account's (docs/operations.md#webhooks).
 */
const OPERATOR = "Bearer operator-token-for-tests";

let owner: TestKey;
beforeEach(async () => {
  owner = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
});

const create = (body: unknown, key = owner.key, bindings: Env = env) =>
  apiWith(bindings, "/v2/webhook-endpoints", {
    method: "POST",
    key,
    headers: { "Content-Type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

/** The bindings of a deployment: a base URL that is not this machine's. */
const deployed: Env = { ...env, BASE_URL: "https://store-orders.example.com/v1" };

interface Endpoint {
  id: string;
  url: string;
  types: string[];
  status: string;
  createdAt: string;
  secret?: string;
}

describe("webhook endpoints", () => {
  it("are made with a secret shown once, listed, read and deleted by their account", async () => {
    const response = await create({ url: "https://receiver.example/hooks" });
    expect(response.status).toBe(201);
    const made = await response.json<Endpoint>();
    expect(made).toEqual({
      id: expect.stringMatching(/^we_[0-9a-f]{20}$/),
      url: "https://receiver.example/hooks",
      types: ["order.cancelled", "order.created", "order.deleted", "order.delivered", "order.shipped", "order.updated"],
      status: "enabled",
      disabledBy: null,
      disabledReason: null,
      disabledForLeakedKey: null,
      failingSince: null,
      lastDeliveredAt: null,
      rateLimit: null,
      ordering: "concurrent",
      signing: "hmac",
      publicKey: null,
      createdAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(atob(made.secret!.slice(6))).toHaveLength(32);

    const { secret, ...shown } = made;
    const listed = await (await api("/v2/webhook-endpoints", { key: owner.key })).json<{ data: Endpoint[] }>();
    expect(listed.data).toEqual([shown]);
    expect(await (await api(`/v2/webhook-endpoints/${made.id}`, { key: owner.key })).json()).toEqual(shown);

    // Sealed in D1: the row holds no secret, and opens only with the Workers secret and this endpoint's id.
    const sealed = (await env.DB.prepare("SELECT secret_sealed FROM webhook_endpoints WHERE id = ?1")
      .bind(made.id)
      .first<string>("secret_sealed"))!;
    expect(sealed).not.toContain(secret!.slice(6, 20));
    expect(await openSecret(env.WEBHOOK_SECRETS_KEY!, made.id, sealed)).toBe(secret);
    await expect(openSecret(env.WEBHOOK_SECRETS_KEY!, "we_00000000000000000000", sealed)).rejects.toThrow();
    await expect(openSecret("another key", made.id, sealed)).rejects.toThrow();

    expect((await api(`/v2/webhook-endpoints/${made.id}`, { method: "DELETE", key: owner.key })).status).toBe(204);
    expect(await errorBodyOf(await api(`/v2/webhook-endpoints/${made.id}`, { key: owner.key }))).toMatchObject({
      code: "webhook_endpoint_not_found",
      status: 404,
    });
    expect(
      (await errorBodyOf(await api(`/v2/webhook-endpoints/${made.id}`, { method: "DELETE", key: owner.key }))).code,
    ).toBe("webhook_endpoint_not_found");
  });

  it("are answered 201 with Location, the new endpoint's own URL", async () => {
    const response = await create({ url: "https://receiver.example/hooks" });
    const made = await response.json<Endpoint>();
    expect(response.headers.get("Location")).toBe(`${ORIGIN}/v2/webhook-endpoints/${made.id}`);
    const path = new URL(response.headers.get("Location")!).pathname;
    expect(await (await api(path, { key: owner.key })).json<Endpoint>()).toMatchObject({ id: made.id });
  });

  it("are made and changed only by a key that may also read what they are sent (orders:read), and say so", async () => {
    const managerOnly = await storeTestKey({ scopes: ["webhooks:manage"] });
    const refused = await create({ url: "https://receiver.example/hooks" }, managerOnly.key);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("WWW-Authenticate")).toBe(
      'Bearer realm="store-orders", error="insufficient_scope", scope="orders:read"',
    );
    expect(await errorBodyOf(refused)).toMatchObject({
      code: "insufficient_scope",
      message: expect.stringContaining("orders:read"),
    });
    // Nor may it change one of its account's (made by a key that could).
    const reader = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"], budget: managerOnly.record.id });
    const made = await (await create({ url: "https://receiver.example/hooks" }, reader.key)).json<Endpoint>();
    const patch = await api(`/v2/webhook-endpoints/${made.id}`, {
      method: "PATCH",
      key: managerOnly.key,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ url: "https://elsewhere.example/" }),
    });
    expect((await errorBodyOf(patch)).code).toBe("insufficient_scope");
    // It may still list, read and delete them: nothing of an order is in those.
    expect((await api("/v2/webhook-endpoints", { key: managerOnly.key })).status).toBe(200);
    expect((await api(`/v2/webhook-endpoints/${made.id}`, { method: "DELETE", key: managerOnly.key })).status).toBe(
      204,
    );
  });

  it("keep the types asked for, each once", async () => {
    const made = await (
      await create({ url: "https://receiver.example/", types: ["order.shipped", "order.cancelled", "order.shipped"] })
    ).json<Endpoint>();
    expect(made.types).toEqual(["order.cancelled", "order.shipped"]);
  });

  it("belong to the account: a rotated key sees them, another account's key gets 404", async () => {
    const made = await (await create({ url: "https://receiver.example/" })).json<Endpoint>();
    const rotated = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"], budget: owner.record.id });
    const stranger = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
    expect((await api(`/v2/webhook-endpoints/${made.id}`, { key: rotated.key })).status).toBe(200);
    expect(await errorBodyOf(await api(`/v2/webhook-endpoints/${made.id}`, { key: stranger.key }))).toMatchObject({
      code: "webhook_endpoint_not_found",
    });
    expect((await api(`/v2/webhook-endpoints/${made.id}`, { method: "DELETE", key: stranger.key })).status).toBe(404);
    expect(
      (await (await api("/v2/webhook-endpoints", { key: stranger.key })).json<{ data: unknown[] }>()).data,
    ).toEqual([]);
  });

  it("are at most 10 an account: the 11th is 409, and after a delete there is room again", async () => {
    const made: Endpoint[] = [];
    for (let i = 0; i < 10; i++)
      made.push(await (await create({ url: `https://receiver.example/${i}` })).json<Endpoint>());
    expect(await errorBodyOf(await create({ url: "https://receiver.example/10" }))).toMatchObject({
      code: "too_many_webhook_endpoints",
      status: 409,
    });
    await api(`/v2/webhook-endpoints/${made[0]!.id}`, { method: "DELETE", key: owner.key });
    expect((await create({ url: "https://receiver.example/10" })).status).toBe(201);
  });

  it("never pass 10 an account, however many are made at once", async () => {
    const statuses = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        create({ url: `https://receiver.example/${i}` }).then((response) => response.status),
      ),
    );
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 409)).toHaveLength(6);
  });

  it.each([
    ["plain http elsewhere", "http://receiver.example/hooks", /must be https/],
    ["credentials", "https://user:pass@receiver.example/hooks", /credentials/],
    ["another scheme", "ftp://receiver.example/hooks", /must be https/],
    ["not a URL", "receiver.example/hooks", /not an absolute URL/],
    ["over 2,048 characters", `https://receiver.example/${"a".repeat(2_030)}`, /longer than 2048/],
  ])("refuse a URL with %s: 400 invalid_webhook_url", async (_, url, message) => {
    const body = await errorBodyOf(await create({ url }));
    expect(body).toMatchObject({ code: "invalid_webhook_url", status: 400 });
    expect(body.message).toMatch(message);
  });

  it("take http to localhost only while the service itself runs locally", async () => {
    expect((await create({ url: "http://localhost:9999/hooks" })).status).toBe(201);
    expect((await create({ url: "http://127.0.0.1:9999/hooks" })).status).toBe(201);
    expect(await errorBodyOf(await create({ url: "http://localhost:9999/hooks" }, owner.key, deployed))).toMatchObject({
      code: "invalid_webhook_url",
    });
  });

  it.each([
    ["https://127.0.0.1/hooks", /127\.0\.0\.1 is a loopback address/],
    ["https://2130706433/hooks", /127\.0\.0\.1 is a loopback address/],
    ["https://0x7f000001/hooks", /127\.0\.0\.1 is a loopback address/],
    ["https://0177.0.0.1/hooks", /127\.0\.0\.1 is a loopback address/],
    ["https://127.1/hooks", /127\.0\.0\.1 is a loopback address/],
    ["https://[::1]/hooks", /\[::1\] is a loopback address/],
    ["https://[::ffff:127.0.0.1]/hooks", /\[::ffff:7f00:1\] is a loopback address/],
    ["https://[::ffff:7f00:1]/hooks", /\[::ffff:7f00:1\] is a loopback address/],
    ["https://10.0.0.1:8443/hooks", /10\.0\.0\.1 is a private address/],
    ["https://172.16.0.1/hooks", /172\.16\.0\.1 is a private address/],
    ["https://192.168.1.1/hooks", /192\.168\.1\.1 is a private address/],
    ["https://100.64.0.1/hooks", /100\.64\.0\.1 is a shared \(carrier-grade NAT\) address/],
    ["https://[fd00::1]/hooks", /\[fd00::1\] is a private \(unique local\) address/],
    ["https://169.254.169.254/latest/meta-data/", /169\.254\.169\.254 is a link-local address/],
    ["https://[fe80::1]/hooks", /\[fe80::1\] is a link-local address/],
    ["https://0.0.0.0/hooks", /0\.0\.0\.0 is an unspecified address/],
    ["https://[::]/hooks", /\[::\] is an unspecified address/],
    ["https://localhost:8795/admin/keys", /localhost is a name for the machine itself/],
    ["https://hooks.localhost/", /hooks\.localhost is a name for the machine itself/],
    ["https://printer.local/hooks", /printer\.local is a name that only resolves inside a network/],
    ["https://billing.internal/hooks", /billing\.internal is a name that only resolves inside a network/],
  ])("refuse %s in staging and production: 400 invalid_webhook_url", async (url, message) => {
    const body = await errorBodyOf(await create({ url }, owner.key, deployed));
    expect(body).toMatchObject({ code: "invalid_webhook_url", status: 400 });
    expect(body.message).toMatch(/^url must name a host on the public internet: /);
    expect(body.message).toMatch(message);
    // Locally a receiver on this machine or its network is what a developer has.
    expect((await create({ url })).status).toBe(201);
  });

  it("take a public https URL in staging and production", async () => {
    expect((await create({ url: "https://receiver.example/hooks" }, owner.key, deployed)).status).toBe(201);
    expect((await create({ url: "https://8.8.8.8/hooks" }, owner.key, deployed)).status).toBe(201);
  });

  it("take plain http locally only to localhost and 127.0.0.1, as documented", async () => {
    expect(await errorBodyOf(await create({ url: "http://[::1]:9999/hooks" }))).toMatchObject({
      code: "invalid_webhook_url",
    });
  });

  it.each([
    ["not JSON", "{url:", /not valid JSON/],
    ["without url", {}, /url/],
    ["an unknown field", { url: "https://receiver.example/", secret: "mine" }, /secret|Unrecognized/],
    ["an unknown type", { url: "https://receiver.example/", types: ["order.paid"] }, /types/],
    ["no types", { url: "https://receiver.example/", types: [] }, /types/],
  ])("refuse a body %s: 400 invalid_body", async (_, body, message) => {
    const error = await errorBodyOf(await create(body));
    expect(error).toMatchObject({ code: "invalid_body", status: 400 });
    expect(error.message).toMatch(message);
  });

  it.each([
    ["text/plain", { "Content-Type": "text/plain" }],
    ["a form", { "Content-Type": "application/x-www-form-urlencoded" }],
    ["a JSON-like type that is not JSON", { "Content-Type": "application/json-seq" }],
    ["no Content-Type", {}],
  ])("refuse a body sent as %s: 415 unsupported_media_type", async (_, headers) => {
    const response = await apiWith(env, "/v2/webhook-endpoints", {
      method: "POST",
      key: owner.key,
      headers,
      body: JSON.stringify({ url: "https://receiver.example/" }),
    });
    const error = await errorBodyOf(response);
    expect(error).toMatchObject({ code: "unsupported_media_type", status: 415 });
    expect(error.message).toMatch(/Content-Type: application\/json/);
  });

  it("take JSON sent with a charset", async () => {
    const headers = { "Content-Type": "application/json; charset=utf-8" };
    const response = await apiWith(env, "/v2/webhook-endpoints", {
      method: "POST",
      key: owner.key,
      headers,
      body: JSON.stringify({ url: "https://receiver.example/" }),
    });
    expect(response.status).toBe(201);
  });

  it("refuse a body over 16,384 bytes: 413 body_too_large", async () => {
    const body = JSON.stringify({ url: `https://receiver.example/${"a".repeat(16_384)}` });
    expect(await errorBodyOf(await create(body))).toMatchObject({ code: "body_too_large", status: 413 });
    // Just under the cap, the same URL is read, and refused for what it is.
    expect((await errorBodyOf(await create({ url: `https://receiver.example/${"a".repeat(16_300)}` }))).code).toBe(
      "invalid_webhook_url",
    );
  });

  /** A body that counts how many of its chunks were read: `chunks` of 4 KB, then its end. */
  function countedBody(chunks: number) {
    const read = { count: 0 };
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (read.count === chunks) return controller.close();
        read.count += 1;
        controller.enqueue(
          new TextEncoder().encode(
            read.count === 1 ? `{"url": "https://receiver.example/${"a".repeat(4_060)}` : "a".repeat(4_096),
          ),
        );
      },
    });
    return { stream, read };
  }

  it("refuse a body whose Content-Length is over the cap before reading any of it", async () => {
    const { stream, read } = countedBody(8);
    const headers = { "Content-Type": "application/json", "Content-Length": String(8 * 4_096) };
    const response = await apiWith(env, "/v2/webhook-endpoints", {
      method: "POST",
      key: owner.key,
      headers,
      body: stream,
    });
    expect(await errorBodyOf(response)).toMatchObject({ code: "body_too_large", status: 413 });
    expect(read.count).toBeLessThanOrEqual(1);
  });

  it("refuse a body sent without a length as soon as it passes the cap, not after reading it all", async () => {
    const { stream, read } = countedBody(1_000);
    const response = await apiWith(env, "/v2/webhook-endpoints", {
      method: "POST",
      key: owner.key,
      headers: { "Content-Type": "application/json" },
      body: stream,
    });
    expect(await errorBodyOf(response)).toMatchObject({ code: "body_too_large", status: 413 });
    expect(read.count).toBeLessThan(10);
  });

  it("need the webhooks:manage scope, which a key made without --scopes does not have", async () => {
    const reader = await storeTestKey({ scopes: ["orders:read", "orders:write"] });
    expect(await errorBodyOf(await create({ url: "https://receiver.example/" }, reader.key))).toMatchObject({
      code: "insufficient_scope",
      status: 403,
    });
    const unscoped = await storeTestKey({});
    expect(unscoped.record.scopes).toEqual(["orders:read", "orders:write"]);
    expect((await api("/v2/webhook-endpoints", { key: unscoped.key })).status).toBe(403);
  });
});

describe("webhook endpoints, for operators", () => {
  it("lists every account's with their status, and disables one, audited", async () => {
    const made = await (await create({ url: "https://receiver.example/op" })).json<Endpoint>();
    const all = await (
      await api("/admin/webhook-endpoints", { key: null, headers: { Authorization: OPERATOR } })
    ).json<{ data: Record<string, unknown>[] }>();
    expect(all.data.find((endpoint) => endpoint.id === made.id)).toMatchObject({
      budget: owner.record.id,
      status: "enabled",
      disabledAt: null,
    });
    expect(JSON.stringify(all)).not.toContain("whsec_");
    // One account's with budget=; a parameter misspelt is refused, never read as "every account's".
    const asOperator = (query: string) =>
      api(`/admin/webhook-endpoints?${query}`, { key: null, headers: { Authorization: OPERATOR } });
    const one = await (await asOperator(`budget=${owner.record.id}`)).json<{ data: { id: string }[] }>();
    expect(one.data.map((endpoint) => endpoint.id)).toContain(made.id);
    expect(await errorBodyOf(await asOperator(`bugdet=${owner.record.id}`))).toMatchObject({
      code: "invalid_query",
      status: 400,
    });

    const disabled = await api(`/admin/webhook-endpoints/${made.id}/disable`, {
      method: "POST",
      key: null,
      headers: { Authorization: OPERATOR },
    });
    expect(await disabled.json()).toEqual({ endpointId: made.id, status: "disabled" });
    expect(await (await api(`/v2/webhook-endpoints/${made.id}`, { key: owner.key })).json()).toMatchObject({
      status: "disabled",
    });
    const audit = await env.DB.prepare(
      "SELECT operation, actor, outcome FROM webhook_endpoint_events WHERE endpoint_id = ?1 AND operation <> 'create'",
    )
      .bind(made.id)
      .all();
    expect(audit.results).toEqual([{ operation: "disable", actor: "tests", outcome: null }]);
  });

  it("answers 404 for an endpoint that does not exist, and keeps no audit row of it", async () => {
    const id = "we_0123456789abcdef0123";
    const response = await api(`/admin/webhook-endpoints/${id}/disable`, {
      method: "POST",
      key: null,
      headers: { Authorization: OPERATOR },
    });
    expect(response.status).toBe(404);
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM webhook_endpoint_events WHERE endpoint_id = ?1")
        .bind(id)
        .first("n"),
    ).toBe(0);
  });
});
