import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { accountLiveness } from "../../../src/keys/live-account";
import { TtlCache } from "../../../src/lib/ttl-cache";
import { edgeKv } from "../../support/faults";
import { storeTestKey } from "../../support/test-keys";

/**
 * Whether an account has a live key that reads orders (its webhooks are delivered only then), told by the account
 * itself (docs/api.md#webhook-endpoints): never by KV, whose copies may be a minute old.
 */
describe("an account's liveness", () => {
  it("is live while one key that reads orders stands, and dead once none does", async () => {
    const reader = await storeTestKey({ scopes: ["orders:read"] });
    await storeTestKey({ scopes: ["webhooks:manage"], budget: reader.record.id });
    const account = reader.record.id;
    expect(await accountLiveness(env.ACCOUNTS, account, new TtlCache(10))).toBe("live");
    await env.ACCOUNTS.getByName(account).revokeKey(reader.record.id, "retired", new Date().toISOString());
    expect(await accountLiveness(env.ACCOUNTS, account, new TtlCache(10))).toBe("dead");
  });

  it("reads nothing from KV: an edge's copy of a revoked key's entries keeps no account live", async () => {
    const key = await storeTestKey({ scopes: ["orders:read"] });
    const edge = edgeKv();
    await edge.seen(`id:${key.record.id}`);
    await env.ACCOUNTS.getByName(key.record.id).revokeKey(key.record.id, "retired", new Date().toISOString());
    expect(await accountLiveness(env.ACCOUNTS, key.record.id, new TtlCache(10))).toBe("dead");
  });

  it("counts an expired key dead with no action at all", async () => {
    const key = await storeTestKey({ scopes: ["orders:read"], expiresAt: new Date(Date.now() - 1000).toISOString() });
    expect(await accountLiveness(env.ACCOUNTS, key.record.id, new TtlCache(10))).toBe("dead");
  });
});
