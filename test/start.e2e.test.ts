import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startService, tempStateDir, type RunningService } from "./node/service";

describe("npm start", () => {
  const state = tempStateDir();
  let service: RunningService | undefined;

  beforeAll(async () => {
    service = await startService(state.path);
  });

  afterAll(async () => {
    await service?.stop();
    state.remove();
  });

  it("serves the demo orders, in every status, on /v1", async () => {
    const response = await service!.call("/v1/store/orders");
    expect(response.status).toBe(200);
    const text = await response.text();
    const statuses = new Set((JSON.parse(text) as { status: string }[]).map((order) => order.status));
    expect([...statuses].sort()).toEqual(["cancelled", "delivered", "pending", "shipped"]);
    expect(text).toContain('"id":9223372036854775807');
  });

  it("prints a ready-to-paste curl line with a working local demo key", async () => {
    expect(service!.demoKey).toMatch(/^so_test_[0-9A-Za-z]{32}$/);
    expect(service!.output()).toContain(`curl -H "Authorization: Bearer ${service!.demoKey}"`);
    expect((await service!.call("/v1/store/orders", { headers: { Authorization: "" } })).status).toBe(401);
  });

  it("keeps the data, and the demo key, when started again on the same state", async () => {
    expect((await service!.call("/v1/store/orders/1", { method: "DELETE" })).status).toBe(204);
    await service!.stop();

    service = await startService(state.path);
    const orders = (await (await service.call("/v1/store/orders")).json()) as { id: number; status: string }[];
    expect(orders.find((order) => order.id === 1)?.status).toBe("cancelled");
    expect(orders).toHaveLength(37);
    expect(service.output()).not.toContain("Creating a local demo API key");
  });
});
