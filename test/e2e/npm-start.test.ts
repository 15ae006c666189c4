import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunningService } from "../../scripts/lib/local-service";
import { runWranglerAsync } from "../../scripts/lib/wrangler";
import { runNpmScript, useKeysCommand } from "../support/npm-script";
import { useService } from "../support/service-fixture";

describe("npm start", () => {
  const service = useService();
  const keys = useKeysCommand(() => service.statePath);

  it("serves the demo orders, in every status, on /v1", async () => {
    const response = await service.current.call("/v1/store/orders");
    expect(response.status).toBe(200);
    const text = await response.text();
    const statuses = new Set((JSON.parse(text) as { status: string }[]).map((order) => order.status));
    expect([...statuses].sort()).toEqual(["cancelled", "delivered", "pending", "shipped"]);
    expect(text).toContain('"id":9223372036854775807');
  });

  it("serves BASE_URL on the port it was started with, in GET / and the deprecation Link", async () => {
    const port = new URL(service.current.baseUrl).port;
    const described = (await (await service.current.call("/")).json()) as { baseUrl: string };
    expect(described.baseUrl).toBe(`http://localhost:${port}/v1`);
    const pet = await service.current.call("/v1/pets/1");
    expect(pet.headers.get("Link")).toMatch(new RegExp(`^<http://localhost:${port}/v1/`));
  });

  it("lists its options with --help, and refuses one it does not know with them and no stack trace", async () => {
    const help = await runNpmScript("start", "--help");
    expect(help.status).toBe(0);
    for (const option of ["--port", "--persist-to", "--orders"]) expect(help.stdout).toContain(option);
    const unknown = await runNpmScript("start", "--prot", "9000");
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--prot'");
    expect(unknown.stderr).toContain("--port");
    expect(unknown.stderr).not.toContain("    at ");
  });

  it("keeps the demo key where the README says it is with --persist-to", () => {
    const readme = readFileSync("README.md", "utf8");
    const documented = /`--persist-to <dir>` keeps it in `<dir>\/([\w./-]+)`/.exec(readme);
    expect(documented, "the README names the demo key's file under --persist-to").not.toBeNull();
    expect(readFileSync(join(service.statePath, documented![1]!), "utf8").trim()).toBe(service.current.demoKey);
  });

  it("prints a ready-to-paste curl line with a working local demo key", async () => {
    expect(service.current.demoKey).toMatch(/^so_test_[0-9A-Za-z]{38}$/);
    expect(service.current.output()).toContain(`curl -H "Authorization: Bearer ${service.current.demoKey}"`);
    expect((await service.current.call("/v1/store/orders", { headers: { Authorization: "" } })).status).toBe(401);
  });

  async function createKey(perMinute: number, perDay: number): Promise<string> {
    const args = [
      "create",
      "--plan",
      "enterprise",
      "--per-minute",
      String(perMinute),
      "--per-day",
      String(perDay),
      "--json",
    ];
    const result = await keys.run(...args);
    expect(result.status, result.stderr).toBe(0);
    return (JSON.parse(result.stdout) as { key: string }).key;
  }

  const listAs = (running: RunningService, key: string) =>
    running.call("/v1/store/orders", { headers: { Authorization: `Bearer ${key}` } });

  // A restart of the real service on the same persisted state, as an operator restarting `npm start` (or workerd
  // restarting) would.
  it("stops wrangler and workerd with it and frees the port on SIGTERM to npm alone; started again on the same state, keeps orders, cancellations, usage counts, bans and the demo key", async () => {
    // Usage: the day window is spent before the restart and refuses after it. Three a day grants leases of one, each
    // spent by the request that asked, so no unspent lease (lost with the isolate, by design) can blur the count.
    const counted = await createKey(1_000, 3);
    for (let i = 0; i < 3; i++) expect((await listAs(service.current, counted)).status).toBe(200);

    // A ban: one admitted, then refused until the key's object bans it (more than BAN_THRESHOLD, 20, refusals in a
    // row). Until it says so: on the wall clock a minute can end among the requests, admitting one and starting the
    // streak again.
    const banned = await createKey(1, 1_000);
    let last: Response | undefined;
    let code: string | undefined;
    for (let i = 0; i < 60 && code !== "api_key_banned"; i++) {
      last = await listAs(service.current, banned);
      code = ((await last.json()) as { code?: string }).code;
    }
    expect(code).toBe("api_key_banned");
    const banEnd = Number(last!.headers.get("X-RateLimit-Reset"));

    expect((await service.current.call("/v1/store/orders/1", { method: "DELETE" })).status).toBe(204);
    const before = await (await service.current.call("/v1/store/orders")).text();

    // Stopped as a process manager (or `kill`) stops it: SIGTERM to npm alone.
    const restarted = await service.restart((running) => stopsWithItsProcesses(running, "SIGTERM"));

    expect(await (await restarted.call("/v1/store/orders")).text()).toBe(before);
    expect((await restarted.call("/v1/store/orders/1", { method: "DELETE" })).status).toBe(204);
    const orders = JSON.parse(before) as { id: number; status: string }[];
    expect(orders.find((order) => order.id === 1)?.status).toBe("cancelled");
    expect(orders).toHaveLength(37);
    expect(restarted.output()).not.toContain("Creating a local demo API key");

    const next = await listAs(restarted, counted);
    expect(next.status).toBe(429);
    expect(((await next.json()) as { code: string }).code).toBe("rate_limit_exceeded");
    expect(next.headers.get("X-RateLimit-Resource")).toBe("day");
    expect(next.headers.get("X-RateLimit-Remaining")).toBe("0");

    const stillBanned = await listAs(restarted, banned);
    expect(stillBanned.status).toBe(429);
    expect(((await stillBanned.json()) as { code: string }).code).toBe("api_key_banned");
    expect(Number(stillBanned.headers.get("X-RateLimit-Reset"))).toBe(banEnd);
  });

  it("stops wrangler and workerd with it, and frees the port, on SIGINT to npm alone (as on SIGTERM above)", async () => {
    await stopsWithItsProcesses(service.current, "SIGINT");
  });

  // Once the service is stopped: wrangler's command is one more local runtime on the same database files.
  it("records the migrations it applied where wrangler looks for them: wrangler has none left to apply", async () => {
    const listed = await runWranglerAsync([
      "d1",
      "migrations",
      "list",
      "store-orders",
      "--local",
      "--persist-to",
      service.statePath,
    ]);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("No migrations to apply");
  });
});

/** Whether any process is left in the process group `pgid` (signal 0 only asks). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** Whether a new server could listen on the loopback port now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * A terminal's Ctrl-C signals every process of the job; a process manager, or
 * `kill`, signals npm alone: npm start must stop wrangler and workerd with it,
 * and free the port.
 */
async function stopsWithItsProcesses(running: RunningService, signal: "SIGTERM" | "SIGINT"): Promise<void> {
  const port = Number(new URL(running.baseUrl).port);
  expect(await portFree(port)).toBe(false);
  process.kill(running.pid, signal);
  try {
    // Every process npm start ran is in npm's process group (startService starts it detached).
    await expect.poll(() => groupAlive(running.pid), { timeout: 30_000, interval: 250 }).toBe(false);
    expect(await portFree(port)).toBe(true);
  } finally {
    // What an npm start left behind is not left to the next test.
    if (groupAlive(running.pid)) process.kill(-running.pid, "SIGKILL");
  }
}
