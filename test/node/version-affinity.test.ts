import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { appendFileSync, cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { mustRunWrangler } from "../../scripts/lib/wrangler";

/**
 * A gradual release in front of the consoles (docs/operations.md#version-affinity). Two versions of the Worker, the
 * bundle `wrangler deploy` uploads with its static assets, run side by side; version B's console scripts differ from
 * A's. A stand-in for Cloudflare's routing sends each request to one of them as the platform does: by the hash of its
 * `Cloudflare-Workers-Version-Key` when the request has one, else at random by the split. With the rule operators add
 * (the key set to the client's address), every page a browser loads runs its own version's script and stylesheet;
 * without it, some pages meet the other version's.
 */
const CLIENTS = 40;
const PAGES = [
  { page: "/console", assets: ["/console/console.js", "/console/console.css"] },
  { page: "/operator", assets: ["/operator/operator.js", "/operator/operator.css"] },
];

/** Each version in a runtime of its own, as each has its own assets. */
const versions: Record<string, Miniflare> = {};
const dir = mkdtempSync(join(tmpdir(), "store-orders-two-versions-"));

beforeAll(async () => {
  const bundle = join(dir, "bundle");
  mustRunWrangler(["deploy", "--dry-run", "--outdir", bundle]);
  const script = readdirSync(bundle).find((file) => file.endsWith(".js"))!;
  // Version B: the same Worker with its own build of the consoles' assets.
  const assetsB = join(dir, "public-b");
  cpSync(resolve("public"), assetsB, { recursive: true });
  for (const { assets } of PAGES)
    for (const asset of assets) appendFileSync(join(assetsB, asset), "\n/* version B */\n");
  const { modulesRules: _, ...options } = unstable_getMiniflareWorkerOptions("wrangler.jsonc").workerOptions;
  const version = (name: string, assets: string) => ({
    ...options,
    name,
    modules: true,
    scriptPath: join(bundle, script),
    modulesRoot: bundle,
    assets: { ...(options.assets as object), directory: assets },
    // The operator API (and with it the operators' console page) is on.
    bindings: { ...(options.bindings as object), OPERATOR_TOKEN: "tests:operator-token-for-tests" },
  });
  const start = async (name: string, assets: string) => {
    const runtime = new Miniflare(
      convertV4MiniflareOptions(version(name, assets) as unknown as Parameters<typeof convertV4MiniflareOptions>[0]),
    );
    await runtime.ready;
    versions[name] = runtime;
  };
  await Promise.all([start("a", resolve("public")), start("b", assetsB)]);
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(versions).map((runtime) => runtime.dispose()));
  rmSync(dir, { recursive: true, force: true });
});

/** FNV-1a: the stand-in's hash of a version key; the platform's own is not published, only that it is deterministic. */
function hash(key: string): number {
  let h = 0x811c9dc5;
  for (const char of key) h = Math.imul(h ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

/** A seeded random number in [0, 1), for the requests without a key. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * One request as Cloudflare routes it at a split of `percentB` on version B, from a client at `address`; `affinity`
 * is the operators' rule (`Cloudflare-Workers-Version-Key` set to the client's address).
 */
async function routed(path: string, address: string, percentB: number, affinity: boolean, random: () => number) {
  const key = affinity ? address : undefined;
  const draw = key === undefined ? random() * 100 : hash(key) % 100;
  const version = draw < percentB ? "b" : "a";
  const response = await versions[version]!.dispatchFetch(`http://store-orders.test${path}`, {
    headers: { "CF-Connecting-IP": address },
  });
  return { version, status: response.status, body: await response.text() };
}

/** What every client got: the version of its page, and of each asset the page names. */
async function loadPages(percentB: number, affinity: boolean) {
  const random = seeded(percentB);
  const loads: { page: string; pageVersion: string; assetVersions: string[]; statuses: number[] }[] = [];
  for (let client = 0; client < CLIENTS; client++) {
    // A network of its own each (documentation addresses), so no client's pages count toward another's limit.
    const address = `2001:db8:${client.toString(16)}::1`;
    for (const { page, assets } of PAGES) {
      const html = await routed(page, address, percentB, affinity, random);
      for (const asset of assets) expect(html.body).toContain(`"${asset}"`);
      const got = await Promise.all(assets.map((asset) => routed(asset, address, percentB, affinity, random)));
      loads.push({
        page,
        pageVersion: html.version,
        // Which build the browser ran: B's files carry its marker.
        assetVersions: got.map(({ body }) => (body.includes("/* version B */") ? "b" : "a")),
        statuses: [html.status, ...got.map(({ status }) => status)],
      });
    }
  }
  return loads;
}

describe("the consoles during a gradual release", () => {
  it.each([10, 50, 90])(
    "at %i% on the new version, with the rule every page runs its own version's script and stylesheet",
    async (percentB) => {
      const loads = await loadPages(percentB, true);
      expect(new Set(loads.flatMap(({ statuses }) => statuses))).toEqual(new Set([200]));
      const mixed = loads.filter(({ pageVersion, assetVersions }) => assetVersions.some((v) => v !== pageVersion));
      expect(mixed).toEqual([]);
      // Both versions served pages: the split was real.
      expect(new Set(loads.map(({ pageVersion }) => pageVersion))).toEqual(new Set(["a", "b"]));
    },
  );

  it("without the rule, pages meet the other version's script", async () => {
    const loads = await loadPages(50, false);
    expect(new Set(loads.flatMap(({ statuses }) => statuses))).toEqual(new Set([200]));
    const mixed = loads.filter(({ pageVersion, assetVersions }) => assetVersions.some((v) => v !== pageVersion));
    expect(mixed.length).toBeGreaterThan(CLIENTS / 4);
  });
});
