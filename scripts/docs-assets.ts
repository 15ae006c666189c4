/**
 * Puts the API reference page's script (Scalar's standalone bundle, from
 * node_modules) among the worker's static assets, so `GET /v1/docs` loads
 * nothing from third-party hosts (docs/api.md#clients). Run by `npm install`
 * (postinstall), so `npm start`, `npm test` and a deploy always have it; the
 * copy is not committed, so it can never drift from the locked version.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

// The package exports no path to its browser bundle: find it from the package's entry point.
const entry = createRequire(import.meta.url).resolve("@scalar/api-reference");
const bundle = join(entry.slice(0, entry.lastIndexOf("/dist/")), "dist/browser/standalone.js");
const target = "public/v1/docs/scalar.js";
mkdirSync(dirname(target), { recursive: true });
copyFileSync(bundle, target);
