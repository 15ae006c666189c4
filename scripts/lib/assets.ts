/**
 * The static assets the worker serves before itself (wrangler.jsonc "assets"),
 * made from node_modules and web/: the API reference page's script, and each
 * console's script and stylesheet (scripts/build-assets.ts says which).
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { build } from "esbuild";

export async function buildAssets(): Promise<void> {
  // The package exports no path to its browser bundle: find it from the package's entry point.
  const entry = createRequire(import.meta.url).resolve("@scalar/api-reference");
  const bundle = join(entry.slice(0, entry.lastIndexOf("/dist/")), "dist/browser/standalone.js");
  const target = "public/v1/docs/scalar.js";
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(bundle, target);

  // The two consoles, each its own script and stylesheet beside its page.
  for (const [name, main, outdir] of [
    ["console", "web/console/console-main.ts", "public/console"],
    ["operator", "web/operator/operator-console-main.ts", "public/operator"],
  ]) {
    await build({
      entryPoints: { [name]: main },
      bundle: true,
      minify: true,
      format: "esm",
      target: "es2022",
      outdir,
      legalComments: "none",
      logLevel: "warning",
    });
  }
}
