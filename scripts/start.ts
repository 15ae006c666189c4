/**
 * `npm start`: local D1 migrations, demo data (once), then `wrangler dev`.
 * State lives in wrangler's default .wrangler/state unless --persist-to says otherwise,
 * so `wrangler d1 execute --local` and `npm run keys` see the same data.
 */
import { parseArgs } from "node:util";
import { mustRunWrangler, startWrangler } from "./lib/wrangler";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "8787" },
    "persist-to": { type: "string" },
  },
});
const persist = values["persist-to"] ? ["--persist-to", values["persist-to"]] : [];

console.log("Applying local D1 migrations…");
mustRunWrangler(["d1", "migrations", "apply", "store-orders", "--local", ...persist]);
console.log("Loading demo data (rows that exist are kept)…");
mustRunWrangler(["d1", "execute", "store-orders", "--local", "--file", "scripts/demo-data.sql", ...persist]);

console.log(`Starting the service on http://localhost:${values.port}/v1`);
const dev = startWrangler(["dev", "--port", values.port, "--ip", "127.0.0.1", ...persist]);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => dev.kill(signal));
dev.on("exit", (code) => process.exit(code ?? 0));
