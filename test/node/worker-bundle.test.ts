import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { sourcesDigest, workerBundle } from "../../scripts/lib/state-worker";

/** The bundle a keys command runs over a local state: built once for the sources as they are (state-worker.ts). */
describe("the keys command's Worker bundle", () => {
  const root = mkdtempSync(join(tmpdir(), "worker-bundle-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("is named by everything it is built from: a source changed, added or moved, the configuration, the lock", () => {
    mkdirSync(join(root, "src", "app"), { recursive: true });
    const write = (file: string, text: string) => writeFileSync(join(root, file), text);
    write("src/app/worker.ts", "export default {};");
    for (const file of ["wrangler.jsonc", "tsconfig.json", "package-lock.json"]) write(file, "{}");
    const seen = [sourcesDigest(root)];
    expect(sourcesDigest(root)).toBe(seen[0]);
    const changes: [string, string][] = [
      ["src/app/worker.ts", "export default { fetch() {} };"],
      ["src/app/other.ts", ""],
      ["wrangler.jsonc", '{ "name": "x" }'],
      ["tsconfig.json", '{ "strict": true }'],
      ["package-lock.json", '{ "lockfileVersion": 3 }'],
    ];
    for (const [file, text] of changes) {
      write(file, text);
      seen.push(sourcesDigest(root));
    }
    rmSync(join(root, "src/app/other.ts"));
    mkdirSync(join(root, "src/lib"));
    write("src/lib/other.ts", "");
    seen.push(sourcesDigest(root));
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("is built once and kept: the next command runs no wrangler, and finds it whole, the only one kept", () => {
    const first = workerBundle();
    const script = readdirSync(first).find((file) => file.endsWith(".js"))!;
    const builtAt = statSync(join(first, script)).mtimeMs;
    // A wrangler that fails whatever it is asked: building again would throw.
    vi.stubEnv("STORE_ORDERS_WRANGLER", "/bin/false");
    try {
      expect(workerBundle()).toBe(first);
    } finally {
      vi.unstubAllEnvs();
    }
    expect(statSync(join(first, script)).mtimeMs).toBe(builtAt);
    expect(readdirSync(join(first, "..")).filter((name) => !name.startsWith("."))).toEqual([first.split("/").at(-1)]);
  }, 60_000);
});
