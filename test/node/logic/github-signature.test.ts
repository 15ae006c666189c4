import { createSign, generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { fc, test } from "@fast-check/vitest";
import { derSignatureToRaw, importGithubKey, verifyGithubSignature } from "../../../src/revocation/github-signature";
import { GITHUB_SAMPLE } from "../../support/github-secret-scanning";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("GitHub's secret scanning signature", () => {
  it("verifies GitHub's documented sample request with the key it names", async () => {
    const key = await importGithubKey(GITHUB_SAMPLE.publicKey);
    expect(await verifyGithubSignature(key, GITHUB_SAMPLE.signature, bytes(GITHUB_SAMPLE.body))).toBe(true);
  });

  it("refuses the sample with any one byte of its body changed, or a byte of its signature", async () => {
    const key = await importGithubKey(GITHUB_SAMPLE.publicKey);
    const body = bytes(GITHUB_SAMPLE.body);
    for (const at of [0, 10, 50, body.length - 1]) {
      const changed = body.slice();
      changed[at] = changed[at]! ^ 0x01;
      expect(await verifyGithubSignature(key, GITHUB_SAMPLE.signature, changed), `byte ${at}`).toBe(false);
    }
    // Reformatted JSON is another body: the signature is over the raw bytes.
    expect(
      await verifyGithubSignature(
        key,
        GITHUB_SAMPLE.signature,
        bytes(JSON.stringify(JSON.parse(GITHUB_SAMPLE.body), null, 1)),
      ),
    ).toBe(false);
    const signature = Uint8Array.from(atob(GITHUB_SAMPLE.signature), (char) => char.charCodeAt(0));
    signature[40] = signature[40]! ^ 0x01;
    expect(await verifyGithubSignature(key, btoa(String.fromCharCode(...signature)), body)).toBe(false);
    expect(await verifyGithubSignature(key, "not base64 at all!", body)).toBe(false);
  });

  test.prop([fc.string({ maxLength: 300 })], { numRuns: 100 })(
    "verifies what Node's crypto signs in DER, and nothing it did not sign",
    async (text) => {
      const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
      const signature = createSign("SHA256").update(text).sign(privateKey).toString("base64");
      const key = await importGithubKey(publicKey.export({ type: "spki", format: "pem" }).toString());
      expect(await verifyGithubSignature(key, signature, bytes(text))).toBe(true);
      expect(await verifyGithubSignature(key, signature, bytes(`${text}.`))).toBe(false);
    },
  );

  it.each([
    ["an empty signature", []],
    ["not a SEQUENCE", [0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]],
    ["a SEQUENCE longer than its bytes", [0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]],
    ["bytes after the SEQUENCE", [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00]],
    ["a negative r", [0x30, 0x06, 0x02, 0x01, 0x81, 0x02, 0x01, 0x01]],
    ["an r with a needless leading zero", [0x30, 0x07, 0x02, 0x02, 0x00, 0x01, 0x02, 0x01, 0x01]],
    ["an r of 33 bytes", [0x30, 0x26, 0x02, 0x21, ...Array(33).fill(0x01), 0x02, 0x01, 0x01]],
    ["a long-form length for a short one", [0x30, 0x81, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]],
  ])("refuses a DER signature that is %s", (_, der) => {
    expect(derSignatureToRaw(Uint8Array.from(der))).toBeUndefined();
  });

  it("pads short coordinates to 32 bytes each", () => {
    const raw = derSignatureToRaw(Uint8Array.from([0x30, 0x07, 0x02, 0x02, 0x00, 0x80, 0x02, 0x01, 0x05]))!;
    expect(raw).toHaveLength(64);
    expect(raw[31]).toBe(0x80);
    expect(raw[63]).toBe(0x05);
  });
});
