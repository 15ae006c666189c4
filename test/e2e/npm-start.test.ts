import { describe, expect, it } from "vitest";
import { useService } from "../support/service-fixture";

describe("npm start", () => {
  const service = useService();

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

  it("prints a ready-to-paste curl line with a working local demo key", async () => {
    expect(service.current.demoKey).toMatch(/^so_test_[0-9A-Za-z]{32}$/);
    expect(service.current.output()).toContain(`curl -H "Authorization: Bearer ${service.current.demoKey}"`);
    expect((await service.current.call("/v1/store/orders", { headers: { Authorization: "" } })).status).toBe(401);
  });

  it("keeps the data, and the demo key, when started again on the same state", async () => {
    expect((await service.current.call("/v1/store/orders/1", { method: "DELETE" })).status).toBe(204);
    const restarted = await service.restart();
    const orders = (await (await restarted.call("/v1/store/orders")).json()) as { id: number; status: string }[];
    expect(orders.find((order) => order.id === 1)?.status).toBe("cancelled");
    expect(orders).toHaveLength(37);
    expect(restarted.output()).not.toContain("Creating a local demo API key");
  });
});
