import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { normalHost, normalWebhookUrl } from "../../../src/webhooks/endpoints/webhook-url";
import { api, apiWith, errorBodyOf } from "../../support/request";
import { storeTestKey } from "../../support/test-keys";
import { makeEndpoint, webhookOwnerOfEachTest, withoutDispatcher } from "../../support/webhook-fixtures";

/**
 * Webhook URLs in their one normal form, and an operator's lock on a host
 * (docs/operations.md#webhooks): every endpoint on it disabled, every URL on
 * it refused to every account until the lock is lifted.
 */
const owner = webhookOwnerOfEachTest();
const asOperator = (path: string, method: string, body?: unknown) =>
  api(`/admin${path}`, {
    method,
    key: null,
    headers: {
      Authorization: "Bearer operator-token-for-tests",
      ...(body !== undefined && { "Content-Type": "application/json" }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
const create = (key: string, url: string) =>
  apiWith(withoutDispatcher(), "/v2/webhook-endpoints", {
    method: "POST",
    key,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ url }),
  });
const endpoint = async (key: string, id: string) =>
  (await api(`/v2/webhook-endpoints/${id}`, { key })).json<{
    url: string;
    status: string;
    disabledBy: string | null;
    disabledReason: string | null;
  }>();

describe("a webhook URL's normal form", () => {
  it.each([
    ["https://Receiver.Example./hook", "https://receiver.example/hook"],
    ["https://receiver.example.:8443/hook?a=%7e", "https://receiver.example:8443/hook?a=~"],
    ["https://bücher.example./x", "https://xn--bcher-kva.example/x"],
    ["https://[::1]/x", "https://[::1]/x"],
  ])("keeps %s as %s", (text, normal) => {
    expect(normalWebhookUrl(text)).toBe(normal);
  });

  it.each([
    ["Receiver.Example.", "receiver.example"],
    ["bücher.example", "xn--bcher-kva.example"],
    ["receiver.example/path", undefined],
    ["https://receiver.example", undefined],
    ["receiver.example:443", undefined],
    ["receiver\\example", undefined],
    ["", undefined],
  ])("reads the host %j as %j", (text, host) => {
    expect(normalHost(text)).toBe(host);
  });

  it("lets no endpoint of the account take a locked endpoint's URL with a trailing dot", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hook" });
    expect((await asOperator(`/webhook-endpoints/${made.id}/disable`, "POST")).status).toBe(200);
    expect(await errorBodyOf(await create(owner.key, "https://receiver.example./hook"))).toMatchObject({
      status: 409,
      code: "webhook_endpoint_locked",
    });
    const stored = await makeEndpoint(owner.key, { url: "https://Receiver.Example./other" });
    expect((await endpoint(owner.key, stored.id)).url).toBe("https://receiver.example/other");
  });
});

describe("an operator's lock on a host", () => {
  it("disables every endpoint on it, of every account, refuses its URLs until lifted, and enables nothing when lifted", async () => {
    const stranger = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
    const mine = await makeEndpoint(owner.key, { url: "https://locked.example/hook" });
    const theirs = await makeEndpoint(stranger.key, { url: "https://LOCKED.example.:8443/other" });
    const elsewhere = await makeEndpoint(owner.key, { url: "https://not-locked.example/hook" });
    const lock = await asOperator("/host-locks", "POST", { host: "Locked.Example.", reason: "probing our network" });
    expect(lock.status).toBe(200);
    expect(((await lock.json()) as { host: string; endpointsDisabled: string[] }).endpointsDisabled.sort()).toEqual(
      [mine.id, theirs.id].sort(),
    );
    expect(await endpoint(owner.key, mine.id)).toMatchObject({
      status: "disabled",
      disabledBy: "operator",
      disabledReason: "disabled by an operator: probing our network",
    });
    expect(await endpoint(stranger.key, theirs.id)).toMatchObject({ status: "disabled", disabledBy: "operator" });
    expect(await endpoint(owner.key, elsewhere.id)).toMatchObject({ status: "enabled" });
    // Every URL on the host, in any spelling, for every account; and no endpoint moves onto it.
    for (const url of ["https://locked.example/new", "https://locked.example.:9443/x", "https://LOCKED.EXAMPLE/"]) {
      expect(await errorBodyOf(await create(stranger.key, url))).toMatchObject({
        status: 409,
        code: "webhook_endpoint_locked",
        message: expect.stringContaining("locked.example"),
      });
    }
    const moved = await apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${elsewhere.id}`, {
      method: "PATCH",
      key: owner.key,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ url: "https://locked.example/moved" }),
    });
    expect(await errorBodyOf(moved)).toMatchObject({ status: 409, code: "webhook_endpoint_locked" });
    // Lifted: its URLs are taken again; the endpoints it disabled stay disabled until an operator enables each.
    expect((await asOperator("/host-locks/LOCKED.example.", "DELETE")).status).toBe(204);
    expect((await create(stranger.key, "https://locked.example/new")).status).toBe(201);
    expect(await endpoint(owner.key, mine.id)).toMatchObject({ status: "disabled", disabledBy: "operator" });
    expect(await errorBodyOf(await asOperator("/host-locks/locked.example", "DELETE"))).toMatchObject({
      status: 404,
      code: "not_found",
    });
    // Who locked and who lifted it stays.
    expect(
      await env.DB.prepare("SELECT locked_by, lifted_by FROM host_locks WHERE host = 'locked.example'").first(),
    ).toEqual({ locked_by: "tests", lifted_by: "tests" });
    expect(
      await errorBodyOf(await asOperator("/host-locks", "POST", { host: "https://locked.example/" })),
    ).toMatchObject({ status: 400, code: "invalid_body" });
  });

  it("refuses an insert that a lock made meanwhile would have refused: the statement itself checks the host", async () => {
    expect((await asOperator("/host-locks", "POST", { host: "raced.example" })).status).toBe(200);
    const { insertEndpoint } = await import("../../../src/webhook-delivery/endpoint-table");
    const row = {
      id: "we_00000000000000000042",
      budget: owner.record.id,
      url: "https://raced.example/x",
      types: "order.created",
      created_at: new Date().toISOString(),
      secret_sealed: "x",
      rate_limit: null,
      public_key: null,
      ordering: "concurrent" as const,
    };
    expect(await insertEndpoint(env.DB, row, "raced.example", "key_AAAAAAAAAAAAAAAA")).toBe("host_locked");
  });
});
