import { createPublicKey, verify } from "node:crypto";
import { describe, expect, it } from "vitest";
import { newSigningKeyPair } from "../../src/webhook-delivery/webhook-secrets";
import { signersOf, webhookHeaders } from "../../src/webhook-delivery/webhook-signature";

/**
 * The service's v1a signatures verified by an implementation that is not WebCrypto's: Node's crypto.verify (OpenSSL),
 * with the public key as its owner gets it (`whpk_` and the base64 of its 32 bytes), as a receiver written in Node
 * would (docs/api.md#receiving-webhooks shows the same few lines).
 */
function verifiesInNode(publicKey: string, id: string, timestamp: string, body: string, signature: string): boolean {
  const x = Buffer.from(publicKey.slice("whpk_".length), "base64").toString("base64url");
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
  return verify(null, Buffer.from(`${id}.${timestamp}.${body}`), key, Buffer.from(signature, "base64"));
}

describe("v1a signatures, verified with Node's crypto", () => {
  it("verify with the endpoint's public key, over exactly id.timestamp.body; during a rotation each with its own", async () => {
    const [current, previous] = [await newSigningKeyPair(), await newSigningKeyPair()];
    const body = '{"id":"evt_42","type":"order.cancelled"}';
    const signers = await signersOf([current.signingKey, previous.signingKey]);
    const headers = await webhookHeaders(signers, "evt_42", 1_764_300_000, body);
    const signatures = headers["webhook-signature"]!.split(" ");
    expect(signatures.every((each) => /^v1a,[A-Za-z0-9+/]{86}==$/.test(each))).toBe(true);
    const [newer, older] = signatures.map((each) => each.slice("v1a,".length)) as [string, string];
    const check = (key: string, signature: string, signedBody = body) =>
      verifiesInNode(key, headers["webhook-id"]!, headers["webhook-timestamp"]!, signedBody, signature);
    expect(check(current.publicKey, newer)).toBe(true);
    expect(check(previous.publicKey, older)).toBe(true);
    expect(check(previous.publicKey, newer)).toBe(false);
    expect(check(current.publicKey, newer, `${body} `)).toBe(false);
  });
});
