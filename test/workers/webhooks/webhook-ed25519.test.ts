import { describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { api, errorBodyOf } from "../../support/request";
import { seedOrders } from "../../support/seed";
import { dispatchQuietly, makeEndpoint, runLaneOnce, webhookOwnerOfEachTest } from "../../support/webhook-fixtures";

/**
 * Ed25519 signatures (docs/api.md#receiving-webhooks): Standard Webhooks' `v1a`, over `id.timestamp.body`, verified
 * with the endpoint's public key alone. No published JavaScript verifier takes v1a (standardwebhooks 1.1.1, the
 * specification's reference library, verifies v1 only), so these verify with WebCrypto's Ed25519 here, and
 * test/node/webhook-ed25519-node.test.ts with Node's crypto.verify.
 */
const owner = webhookOwnerOfEachTest();

interface Delivery {
  headers: Headers;
  body: string;
}

/** A receiver that keeps what each POST carried. */
function keepingReceiver() {
  const delivered: Delivery[] = [];
  const fetch = (async (_url: string, init: RequestInit) => {
    delivered.push({ headers: new Headers(init.headers), body: String(init.body) });
    return new Response(null, { status: 204 });
  }) as unknown as typeof globalThis.fetch;
  return { delivered, fetch };
}

/** Whether `signature` (v1a's base64) is Ed25519's over the delivery's signed content under the `whpk_` key. */
async function verifiesWith(publicKey: string, delivery: Delivery, signature: string): Promise<boolean> {
  const raw = Uint8Array.from(atob(publicKey.slice("whpk_".length)), (char) => char.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
  const signed = `${delivery.headers.get("webhook-id")}.${delivery.headers.get("webhook-timestamp")}.${delivery.body}`;
  const bytes = Uint8Array.from(atob(signature), (char) => char.charCodeAt(0));
  return crypto.subtle.verify({ name: "Ed25519" }, key, bytes, new TextEncoder().encode(signed));
}

const signaturesOf = (delivery: Delivery, scheme: string) =>
  delivery.headers
    .get("webhook-signature")!
    .split(" ")
    .filter((each) => each.startsWith(`${scheme},`))
    .map((each) => each.slice(scheme.length + 1));

describe("an ed25519 endpoint", () => {
  it("is made with a public key and no secret, and says so when read", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks", signing: "ed25519" });
    expect(made).not.toHaveProperty("secret");
    expect(made.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    const read = await (await api(`/v2/webhook-endpoints/${made.id}`, { key: owner.key })).json();
    expect(read).toMatchObject({ signing: "ed25519", publicKey: made.publicKey });
    const hmac = await makeEndpoint(owner.key, { url: "https://receiver.example/other" });
    expect(hmac).toMatchObject({ signing: "hmac", publicKey: null, secret: expect.stringMatching(/^whsec_/) });
  });

  it("signs each delivery v1a over id.timestamp.body, which its public key verifies and no other does", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks", signing: "ed25519" });
    const other = await makeEndpoint(owner.key, { url: "https://receiver.example/b", signing: "ed25519" });
    await seedOrders([{ id: 71 }]);
    await dispatchQuietly();
    const { delivered, fetch } = keepingReceiver();
    expect(await runLaneOnce(made.id, { fetch })).toMatchObject({ delivered: 1 });
    const [delivery] = delivered;
    expect(signaturesOf(delivery!, "v1")).toEqual([]);
    const [signature] = signaturesOf(delivery!, "v1a");
    expect(await verifiesWith(made.publicKey!, delivery!, signature!)).toBe(true);
    expect(await verifiesWith(other.publicKey!, delivery!, signature!)).toBe(false);
    expect(await verifiesWith(made.publicKey!, { ...delivery!, body: `${delivery!.body} ` }, signature!)).toBe(false);
  });

  it("rotates to a new key pair, answered as its public key; both sign during the overlap, then the new alone", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks", signing: "ed25519" });
    const rotate = (overlapSeconds: number) =>
      api(`/v2/webhook-endpoints/${made.id}/rotate-secret`, {
        method: "POST",
        key: owner.key,
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ overlapSeconds }),
      });
    const rotated = await (await rotate(3_600)).json<{ publicKey: string; secret?: string }>();
    expect(rotated.secret).toBeUndefined();
    expect(rotated.publicKey).toMatch(/^whpk_/);
    expect(rotated.publicKey).not.toBe(made.publicKey);
    await seedOrders([{ id: 72 }]);
    await dispatchQuietly();
    const { delivered, fetch } = keepingReceiver();
    await runLaneOnce(made.id, { fetch });
    const [newer, older] = signaturesOf(delivered[0]!, "v1a");
    expect(await verifiesWith(rotated.publicKey, delivered[0]!, newer!)).toBe(true);
    expect(await verifiesWith(made.publicKey!, delivered[0]!, older!)).toBe(true);
    const ended = await (await rotate(0)).json<{ publicKey: string }>();
    await seedOrders([{ id: 73 }]);
    await dispatchQuietly();
    await runLaneOnce(made.id, { fetch });
    const last = signaturesOf(delivered[1]!, "v1a");
    expect(last).toHaveLength(1);
    expect(await verifiesWith(ended.publicKey, delivered[1]!, last[0]!)).toBe(true);
  });

  it("is refused as a signing the API does not know", async () => {
    const response = await api("/v2/webhook-endpoints", {
      method: "POST",
      key: owner.key,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ url: "https://receiver.example/hooks", signing: "rsa" }),
    });
    expect((await errorBodyOf(response)).code).toBe("invalid_body");
  });

  it("leaves an hmac endpoint's deliveries as Standard Webhooks' reference library verifies them (v1)", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    await seedOrders([{ id: 74 }]);
    await dispatchQuietly();
    const { delivered, fetch } = keepingReceiver();
    await runLaneOnce(made.id, { fetch });
    const headers = Object.fromEntries(delivered[0]!.headers);
    expect(() => new Webhook(made.secret).verify(delivered[0]!.body, headers)).not.toThrow();
  });
});
