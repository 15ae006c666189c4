import { describe, expect, it } from "vitest";
import { useKeysCommand } from "../support/npm-script";
import type { RunningService } from "../../scripts/lib/local-service";
import { useService } from "../support/service-fixture";

/**
 * Stops the real service and starts it again on the same persisted state, as
 * an operator restarting `npm start` (or workerd restarting) would.
 */
describe("a restart of the local service", () => {
  const service = useService();
  const keys = useKeysCommand(() => service.statePath);

  async function createKey(perMinute: number, perDay: number): Promise<string> {
    const args = ["create", "--plan", "enterprise", "--per-minute", String(perMinute), "--per-day", String(perDay), "--json"];
    const result = await keys.run(...args);
    expect(result.status).toBe(0);
    return (JSON.parse(result.stdout) as { key: string }).key;
  }

  const listAs = (running: RunningService, key: string) =>
    running.call("/v1/store/orders", { headers: { Authorization: `Bearer ${key}` } });

  it("keeps orders, cancellations, usage counts and bans", async () => {
    // Usage: the day window (50) is the one with less left, so it is the one reported.
    const counted = await createKey(1_000, 50);
    for (let i = 0; i < 3; i++) expect((await listAs(service.current, counted)).status).toBe(200);

    // A ban: one admitted, then more than BAN_THRESHOLD (20) refused in a row.
    const banned = await createKey(1, 1_000);
    let last: Response | undefined;
    for (let i = 0; i < 23; i++) {
      last = await listAs(service.current, banned);
      await last.arrayBuffer();
    }
    expect(last!.status).toBe(429);
    const banEnd = Number(last!.headers.get("X-RateLimit-Reset"));

    expect((await service.current.call("/v1/store/orders/1", { method: "DELETE" })).status).toBe(204);
    const before = await (await service.current.call("/v1/store/orders")).text();

    const restarted = await service.restart();

    expect(await (await restarted.call("/v1/store/orders")).text()).toBe(before);
    expect((await restarted.call("/v1/store/orders/1", { method: "DELETE" })).status).toBe(204);
    expect((JSON.parse(before) as { id: number; status: string }[]).find((order) => order.id === 1)?.status).toBe("cancelled");

    const next = await listAs(restarted, counted);
    expect(next.status).toBe(200);
    expect(next.headers.get("X-RateLimit-Resource")).toBe("day");
    expect(next.headers.get("X-RateLimit-Remaining")).toBe("46");

    const stillBanned = await listAs(restarted, banned);
    expect(stillBanned.status).toBe(429);
    expect(((await stillBanned.json()) as { code: string }).code).toBe("api_key_banned");
    expect(Number(stillBanned.headers.get("X-RateLimit-Reset"))).toBe(banEnd);
  });
});
