/**
 * GitHub's secret scanning partner program, as its documentation shows it
 * (docs.github.com, "Secret scanning partner program", "Implement signature
 * verification in your secret alert service"): the sample request, its
 * signature and the public key it names, as `GET
 * https://api.github.com/meta/public_keys/secret_scanning` answers for that
 * identifier. Recorded here so the fake key server answers as GitHub's does.
 */
export const GITHUB_SAMPLE = {
  keyIdentifier: "bcb53661c06b4728e59d897fb6165d5c9cda0fd9cdf9d09ead458168deb7518c",
  signature: "MEQCIQDaMKqrGnE27S0kgMrEK0eYBmyG0LeZismAEz/BgZyt7AIfXt9fErtRS4XaeSt/AO1RtBY66YcAdjxji410VQV4xg==",
  body: '[{"source":"commit","token":"some_token","type":"some_type","url":"https://example.com/base-repo-url/"}]',
  publicKey:
    "-----BEGIN PUBLIC KEY-----\n" +
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYAGMWO8XgCamYKMJS6jc/qgvSlAd\n" +
    "AjPuDPRcXU22YxgBrz+zoN19MzuRyW87qEt9/AmtoNP5GrobzUvQSyJFVw==\n" +
    "-----END PUBLIC KEY-----\n",
} as const;

/** The key list GitHub publishes, in its shape: `{"public_keys":[{"key_identifier","key","is_current"}]}`. */
export const publishedKeys = (...keys: { id: string; pem: string; current?: boolean }[]) => ({
  public_keys: keys.map(({ id, pem, current = true }) => ({ key_identifier: id, key: pem, is_current: current })),
});

/** A signer of our own, as GitHub signs: ECDSA P-256 with SHA-256, the signature in DER, base64. */
export async function githubLikeSigner(): Promise<{ pem: string; sign(body: string): Promise<string> }> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  const spki = new Uint8Array((await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer);
  const pem =
    `-----BEGIN PUBLIC ` +
    `KEY-----\n${btoa(String.fromCharCode(...spki)).replace(/(.{64})/g, "$1\n")}\n-----END PUBLIC KEY-----\n`;
  return {
    pem,
    async sign(body) {
      const raw = new Uint8Array(
        await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, pair.privateKey, new TextEncoder().encode(body)),
      );
      return btoa(String.fromCharCode(...derOf(raw)));
    },
  };
}

/** r‖s as DER: SEQUENCE { INTEGER r, INTEGER s }, each minimal, with a zero byte before a high bit. */
function derOf(raw: Uint8Array): Uint8Array {
  const integer = (bytes: Uint8Array) => {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0 && !(bytes[start + 1]! & 0x80)) start++;
    const body = bytes[start]! & 0x80 ? [0, ...bytes.subarray(start)] : [...bytes.subarray(start)];
    return [0x02, body.length, ...body];
  };
  const content = [...integer(raw.subarray(0, 32)), ...integer(raw.subarray(32))];
  return Uint8Array.from([0x30, content.length, ...content]);
}
