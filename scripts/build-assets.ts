/**
 * The static assets the worker serves before itself (wrangler.jsonc "assets"),
 * made from node_modules and src by `npm install` (postinstall), so
 * `npm start`, `npm test` and a deploy always have them, and nothing is
 * fetched from another host at run time. Not committed: they can never drift
 * from the locked versions or the source.
 * - The API reference page's script (Scalar's standalone bundle), under /v1/docs.
 * - The console (docs/api.md#the-console): its script and stylesheet, bundled
 *   from src/console/browser with the consoles' kit (src/console-kit/browser)
 *   and the chart library, under /console; and the operators' console's
 *   (docs/operations.md#the-operators-console) from
 *   src/operator/console/browser, with the same kit, under /operator.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { build } from "esbuild";

// The package exports no path to its browser bundle: find it from the package's entry point.
const entry = createRequire(import.meta.url).resolve("@scalar/api-reference");
const bundle = join(entry.slice(0, entry.lastIndexOf("/dist/")), "dist/browser/standalone.js");
const target = "public/v1/docs/scalar.js";
mkdirSync(dirname(target), { recursive: true });
copyFileSync(bundle, target);

// The two consoles, each its own script and stylesheet beside its page.
for (const [name, entry, outdir] of [
  ["console", "src/console/browser/console-main.ts", "public/console"],
  ["operator", "src/operator/console/browser/operator-console-main.ts", "public/operator"],
]) {
  await build({
    entryPoints: { [name]: entry },
    bundle: true,
    minify: true,
    format: "esm",
    target: "es2022",
    outdir,
    legalComments: "none",
    logLevel: "warning",
  });
}
