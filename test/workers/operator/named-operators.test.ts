import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { sha256Hex } from "../../../src/lib/digest";
import { INSERT_OPERATOR, REVOKE_OPERATOR } from "../../../src/operator/operator-table";
import { freshWebhookOwner, makeEndpoint } from "../../support/webhook-fixtures";
import { api, apiWith, errorBodyOf } from "../../support/request";
import { storeTestKey, type TestKey } from "../../support/test-keys";

/** An operator added as `npm run keys -- operator add` adds one: only the token's SHA-256 stored. */
async function addOperator(name: string): Promise<string> {
  const token = `so_op_${crypto.randomUUID()}`;
  await env.DB.prepare(INSERT_OPERATOR).bind(name, await sha256Hex(token), new Date().toISOString(), "cli:tests").run();
  return token;
}

const asOperator = (token: string, path: string, method = "GET", body?: unknown) =>
  api(`/admin${path}`, {
    method,
    key: null,
    headers: { Authorization: `Bearer ${token}`, ...(body !== undefined && { "Content-Type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });

let key: TestKey;
beforeEach(async () => {
  await env.DB.prepare("DELETE FROM operators").run();
  key = await storeTestKey({ plan: "free" });
});

describe("named operators", () => {
  it("act with a token of their own, and every audit row of their actions names them", async () => {
    const ana = await addOperator("ana@example.com");
    expect((await asOperator(ana, `/keys/${key.record.id}/limits`, "POST", { perMinute: 5, perDay: 50 })).status).toBe(200);
    expect((await asOperator(ana, `/keys/${key.record.id}/unban`, "POST")).status).toBe(200);
    expect((await asOperator(ana, `/keys/${key.record.id}/console-link`, "POST")).status).toBe(201);
    expect((await asOperator(ana, `/keys/${key.record.id}/revoke`, "POST")).status).toBe(200);
    const keyRows = await env.DB.prepare("SELECT operation, actor FROM key_events WHERE key_id = ?1 ORDER BY id").bind(key.record.id).all();
    expect(keyRows.results).toEqual(["update", "unban", "console_link", "revoke"].map((operation) => ({ operation, actor: "ana@example.com" })));

    const owner = await freshWebhookOwner();
    const endpoint = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    expect((await asOperator(ana, `/webhook-endpoints/${endpoint.id}/disable`, "POST")).status).toBe(200);
    expect((await asOperator(ana, `/webhook-endpoints/${endpoint.id}/enable`, "POST")).status).toBe(200);
    const endpointRows = await env.DB.prepare("SELECT operation, actor FROM webhook_endpoint_events WHERE endpoint_id = ?1 AND operation <> 'create' ORDER BY id").bind(endpoint.id).all();
    expect(endpointRows.results).toEqual([
      { operation: "disable", actor: "ana@example.com" },
      { operation: "enable", actor: "ana@example.com" },
    ]);
  });

  it("are refused from the request after their revocation, each alone: the others and the bootstrap operator go on", async () => {
    const [ana, ben] = [await addOperator("ana"), await addOperator("ben")];
    const usage = `/keys/${key.record.id}/usage`;
    expect((await asOperator(ana, usage)).status).toBe(200);
    await env.DB.prepare(REVOKE_OPERATOR).bind("ana", new Date().toISOString(), "cli:tests").run();
    const refused = await asOperator(ana, usage);
    expect(await errorBodyOf(refused)).toMatchObject({ code: "invalid_api_key", status: 401 });
    expect(refused.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    expect((await asOperator(ben, usage)).status).toBe(200);
    expect((await asOperator("operator-token-for-tests", usage)).status).toBe(200);
  });

  it("are never API keys, nor API keys operators: each is refused where the other is needed", async () => {
    const ana = await addOperator("ana");
    expect((await api("/v1/store/orders", { key: ana })).status).toBe(401);
    expect((await asOperator(key.key, `/keys/${key.record.id}/usage`)).status).toBe(401);
  });

  it("need the operator API to exist: without the bootstrap secret a named token finds nothing (404)", async () => {
    const ana = await addOperator("ana");
    const { OPERATOR_TOKEN: _, ...withoutToken } = env;
    const response = await apiWith(withoutToken as Env, `/admin/keys/${key.record.id}/usage`, { key: null, headers: { Authorization: `Bearer ${ana}` } });
    expect(await errorBodyOf(response)).toMatchObject({ code: "not_found", status: 404 });
  });
});
