/**
 * The static assets the worker serves before itself (wrangler.jsonc "assets"),
 * made from node_modules and web/: the API reference page's script, and each
 * console's script and stylesheet (scripts/build-assets.ts says which). A
 * file is written only when its bytes change, by a rename: a `wrangler dev`
 * serving public/ reloads only for an edit, and never reads half a file.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, relative } from "node:path";
import { build } from "esbuild";

/** Beside the checkout, not in public/ (a watcher there would see the temporary file). */
const STAGING = "node_modules/.cache/store-orders-assets";

function writeIfChanged(path: string, bytes: Uint8Array): void {
  if (existsSync(path) && Buffer.compare(readFileSync(path), bytes) === 0) return;
  mkdirSync(dirname(path), { recursive: true });
  mkdirSync(STAGING, { recursive: true });
  const staged = join(STAGING, `${process.pid}-${basename(path)}`);
  writeFileSync(staged, bytes);
  renameSync(staged, path);
}

export async function buildAssets(): Promise<void> {
  // The package exports no path to its browser bundle: find it from the package's entry point.
  const entry = createRequire(import.meta.url).resolve("@scalar/api-reference");
  const bundle = join(entry.slice(0, entry.lastIndexOf("/dist/")), "dist/browser/standalone.js");
  writeIfChanged("public/v1/docs/scalar.js", readFileSync(bundle));

  // The two consoles, each its own script and stylesheet beside its page.
  for (const [name, main, outdir] of [
    ["console", "web/console/console-main.tsx", "public/console"],
    ["operator", "web/operator/operator-console-main.tsx", "public/operator"],
  ]) {
    const { outputFiles } = await build({
      entryPoints: { [name]: main },
      bundle: true,
      minify: true,
      format: "esm",
      target: "es2022",
      outdir,
      write: false,
      legalComments: "none",
      logLevel: "warning",
    });
    for (const file of outputFiles) writeIfChanged(relative(process.cwd(), file.path), file.contents);
  }
}
