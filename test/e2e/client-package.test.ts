import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StoreOrdersClient } from "../../client/src/store-orders-client";
import { useSharedService } from "../support/service-fixture";

const service = useSharedService();
const scratch = mkdtempSync(join(tmpdir(), "store-orders-client-package-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      command,
      args,
      { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env } },
      (error, stdout, stderr) => done({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** What another project runs: the installed package, by its name, walking v2's pending orders. */
const WALK = `import { StoreOrdersClient } from "@store-orders/client";
const client = new StoreOrdersClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
const ids = [];
for await (const order of client.v2.orders.list({ status: ["pending"], limit: 1000 })) {
  if (order.status !== "pending") throw new Error("not pending: " + order.id);
  ids.push(order.id);
}
console.log(JSON.stringify(ids));
`;

describe("the client as a package another project installs", () => {
  it("packs to compiled ESM with declarations and no dependency on this repository, installs, and walks v2 to exactly v1's pending orders", async () => {
    const packed = await run("npm", ["pack", "--pack-destination", scratch], resolve("client"));
    expect(packed.status, packed.stderr).toBe(0);
    const tarball = readdirSync(scratch).find((name) => name.endsWith(".tgz"))!;
    const listing = await run("tar", ["tzf", tarball], scratch);
    const files = listing.stdout.trim().split("\n").sort();
    expect(files).toContain("package/dist/store-orders-client.js");
    expect(files).toContain("package/dist/store-orders-client.d.ts");
    expect(files.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual([]);

    const project = join(scratch, "project");
    await run("mkdir", ["-p", project], scratch);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "a-store-front", private: true, type: "module" }),
    );
    const installed = await run(
      "npm",
      ["install", join(scratch, tarball), "--offline", "--no-audit", "--no-fund"],
      project,
    );
    expect(installed.status, installed.stderr).toBe(0);
    writeFileSync(join(project, "walk.mjs"), WALK);
    const walked = await run(process.execPath, ["walk.mjs"], project, {
      BASE_URL: `${service.current.baseUrl}/v1`,
      API_KEY: service.current.demoKey,
    });
    expect(walked.status, walked.stderr).toBe(0);
    const ids = JSON.parse(walked.stdout) as string[];

    // v1's whole list, by the client from this repository (exact ids), filtered here.
    const v1 = new StoreOrdersClient({ baseUrl: `${service.current.baseUrl}/v1`, apiKey: service.current.demoKey });
    const pending = (await v1.listOrders()).filter((order) => order.status === "pending").map((order) => order.id);
    expect(pending.length).toBeGreaterThan(20_000);
    expect(ids).toEqual(pending);
  });
});
