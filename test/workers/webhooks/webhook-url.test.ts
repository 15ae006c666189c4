import { describe, expect, it } from "vitest";
import { nonPublicHost } from "../../../src/lib/non-public-host";
import { servedLocally, webhookUrlProblem } from "../../../src/webhooks/endpoints/webhook-url";

/**
 * Where a webhook may point (docs/api.md#webhook-endpoints), as the pure
 * rules see it, with workerd's own URL parser: every notation of an
 * internal address below is what a caller could send, and the parser's
 * normal form of it is what the rules read.
 */
const INTERNAL: readonly (readonly [url: string, hostname: string, kind: RegExp])[] = [
  ["https://127.0.0.1/", "127.0.0.1", /loopback/],
  ["https://127.255.255.254:8443/", "127.255.255.254", /loopback/],
  ["https://2130706433/", "127.0.0.1", /loopback/],
  ["https://0x7f000001/", "127.0.0.1", /loopback/],
  ["https://0177.0.0.1/", "127.0.0.1", /loopback/],
  ["https://127.1/", "127.0.0.1", /loopback/],
  ["https://[::1]/", "[::1]", /loopback/],
  ["https://[0:0:0:0:0:0:0:1]/", "[::1]", /loopback/],
  ["https://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]", /loopback/],
  ["https://[::ffff:7f00:1]/", "[::ffff:7f00:1]", /loopback/],
  ["https://[::127.0.0.1]/", "[::7f00:1]", /loopback/],
  ["https://[64:ff9b::127.0.0.1]/", "[64:ff9b::7f00:1]", /loopback/],
  ["https://[2002:7f00:1::]/", "[2002:7f00:1::]", /loopback/],
  ["https://10.0.0.1:8443/", "10.0.0.1", /private/],
  ["https://10.255.255.255/", "10.255.255.255", /private/],
  ["https://172.16.0.1/", "172.16.0.1", /private/],
  ["https://172.31.255.255/", "172.31.255.255", /private/],
  ["https://192.168.1.1/", "192.168.1.1", /private/],
  ["https://[::ffff:192.168.1.1]/", "[::ffff:c0a8:101]", /private/],
  ["https://100.64.0.1/", "100.64.0.1", /carrier-grade NAT/],
  ["https://100.127.255.255/", "100.127.255.255", /carrier-grade NAT/],
  ["https://[fd00::1]/", "[fd00::1]", /unique local/],
  ["https://[fc00::]/", "[fc00::]", /unique local/],
  ["https://169.254.169.254/latest/meta-data/", "169.254.169.254", /link-local/],
  ["https://[fe80::1]/", "[fe80::1]", /link-local/],
  ["https://[febf:ffff::1]/", "[febf:ffff::1]", /link-local/],
  ["https://0.0.0.0/", "0.0.0.0", /unspecified/],
  ["https://0/", "0.0.0.0", /unspecified/],
  ["https://0.1.2.3/", "0.1.2.3", /unspecified/],
  ["https://[::]/", "[::]", /unspecified/],
  ["https://localhost:8795/admin/keys", "localhost", /the machine itself/],
  ["https://LOCALHOST./", "localhost.", /the machine itself/],
  ["https://api.localhost/", "api.localhost", /the machine itself/],
  ["https://printer.local/", "printer.local", /\.local\b/],
  ["https://db.internal./", "db.internal.", /\.internal\b/],
  // Ranges and names a security review found taken (docs/design/reliability.md).
  ["https://[::ffff:0:7f00:1]/", "[::ffff:0:7f00:1]", /loopback/],
  ["https://[::ffff:0:a00:1]/", "[::ffff:0:a00:1]", /private/],
  ["https://198.18.0.1/", "198.18.0.1", /benchmarking/],
  ["https://198.19.255.255/", "198.19.255.255", /benchmarking/],
  ["https://192.0.0.170/", "192.0.0.170", /protocol assignments/],
  ["https://192.0.2.1/", "192.0.2.1", /documentation/],
  ["https://224.0.0.1/", "224.0.0.1", /multicast/],
  ["https://239.255.255.250/", "239.255.255.250", /multicast/],
  ["https://240.0.0.1/", "240.0.0.1", /reserved/],
  ["https://255.255.255.255/", "255.255.255.255", /reserved/],
  ["https://[fec0::1]/", "[fec0::1]", /site-local/],
  ["https://[feff:ffff::1]/", "[feff:ffff::1]", /site-local/],
  ["https://[ff02::1]/", "[ff02::1]", /multicast/],
  ["https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "[2001:0:4136:e378:8000:63bf:3fff:fdd2]", /Teredo/],
  ["https://[2001:db8::1]/", "[2001:db8::1]", /documentation/],
  ["https://[64:ff9b:1::a00:1]/", "[64:ff9b:1::a00:1]", /local-use NAT64/],
  ["https://[100::1]/", "[100::1]", /discard/],
  ["https://intranet/", "intranet", /single-label/],
  ["https://mylocalhost/", "mylocalhost", /single-label/],
  ["https://router./", "router.", /single-label/],
  ["https://nas.home.arpa/", "nas.home.arpa", /\.home\.arpa\b/],
  ["https://printer.lan/", "printer.lan", /\.lan\b/],
];

const PUBLIC: readonly string[] = [
  "https://receiver.example/hooks",
  "https://8.8.8.8/",
  "https://9.255.255.255/",
  "https://11.0.0.1/",
  "https://100.63.255.255/",
  "https://100.128.0.1/",
  "https://126.255.255.255/",
  "https://128.0.0.1/",
  "https://169.253.1.1/",
  "https://172.15.255.255/",
  "https://172.32.0.1/",
  "https://192.167.1.1/",
  "https://1.0.0.0/",
  "https://[2606:4700:4700::1111]/",
  "https://[::ffff:8.8.8.8]/",
  "https://localhost.example/",
  "https://198.17.255.255/",
  "https://198.20.0.1/",
  "https://223.255.255.255/",
  "https://192.0.1.255/",
  "https://[2001:4860:4860::8888]/",
  "https://[2001:1::1]/",
  "https://[64:ff9b:2::1]/",
  "https://lan.example/",
  "https://home.arpa.example/",
  "https://local.example/",
  "https://internal.example.com/",
];

describe("nonPublicHost", () => {
  it.each(INTERNAL)("refuses %s: the URL parser leaves %s", (url, hostname, kind) => {
    expect(new URL(url).hostname).toBe(hostname);
    expect(nonPublicHost(hostname)).toMatch(kind);
  });

  it.each(PUBLIC)("takes %s", (url) => {
    expect(nonPublicHost(new URL(url).hostname)).toBeUndefined();
  });
});

describe("webhookUrlProblem", () => {
  it.each(INTERNAL)("refuses %s in a deployed service, naming what the host is", (url, hostname, kind) => {
    const problem = webhookUrlProblem(url, false);
    expect(problem).toMatch(
      new RegExp(`^url must name a host on the public internet: ${hostname.replace(/[.[\]]/g, "\\$&")} is `),
    );
    expect(problem).toMatch(kind);
  });

  it.each(PUBLIC)("takes %s in a deployed service", (url) => {
    expect(webhookUrlProblem(url, false)).toBeUndefined();
  });

  it("takes any https host, and plain http to localhost or 127.0.0.1, while the service runs locally", () => {
    for (const [url] of INTERNAL) expect(webhookUrlProblem(url, true)).toBeUndefined();
    for (const url of ["http://localhost:9000/hooks", "http://127.0.0.1:9000/hooks"]) {
      expect(webhookUrlProblem(url, true)).toBeUndefined();
      expect(webhookUrlProblem(url, false)).toBe("url must be https");
    }
    for (const url of ["http://[::1]:9000/hooks", "http://10.0.0.1/hooks", "http://receiver.example/hooks"]) {
      expect(webhookUrlProblem(url, true)).toMatch(/^url must be https \(or http to localhost or 127\.0\.0\.1/);
    }
  });

  it("knows the service runs locally by its own base URL", () => {
    expect(servedLocally("http://localhost:8787/v1")).toBe(true);
    expect(servedLocally("http://127.0.0.1:8787/v1")).toBe(true);
    expect(servedLocally("https://store-orders.example.com/v1")).toBe(false);
  });
});
