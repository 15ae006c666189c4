import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { BOOKMARK_HEADER, isBookmark } from "../../../src/lib/bookmark";
import { interceptD1 } from "../../support/faults";
import { api, apiWith, errorBodyOf } from "../../support/request";
import { clearOrders, seedOrders } from "../../support/seed";

/** The real D1 binding, noting the constraint of every session the worker opens. */
function sessionRecordingD1(): { db: D1Database; constraints: string[] } {
  const constraints: string[] = [];
  return { db: interceptD1({ onSession: (constraint) => constraints.push(constraint) }), constraints };
}

beforeEach(async () => {
  await clearOrders();
  await seedOrders([{ id: 1 }, { id: 2 }]);
});

describe("D1 sessions", () => {
  it("lists from the nearest replica when the client sends no bookmark, and returns one", async () => {
    const d1 = sessionRecordingD1();
    const response = await apiWith({ ...env, DB: d1.db }, "/v1/store/orders");
    expect(response.status).toBe(200);
    expect(d1.constraints).toEqual(["first-unconstrained"]);
    expect(isBookmark(response.headers.get(BOOKMARK_HEADER) ?? "")).toBe(true);
  });

  it("cancels on the primary and returns the write's bookmark", async () => {
    const d1 = sessionRecordingD1();
    const response = await apiWith({ ...env, DB: d1.db }, "/v1/store/orders/1", { method: "DELETE" });
    expect(response.status).toBe(204);
    expect(d1.constraints).toEqual(["first-primary"]);
    expect(isBookmark(response.headers.get(BOOKMARK_HEADER) ?? "")).toBe(true);
  });

  it("reads at least as new as a cancel through this isolate, even when the canceller sends no bookmark back", async () => {
    const cancel = await api("/v1/store/orders/1", { method: "DELETE" });
    const bookmark = cancel.headers.get(BOOKMARK_HEADER)!;
    const d1 = sessionRecordingD1();
    expect((await apiWith({ ...env, DB: d1.db }, "/v1/store/orders")).status).toBe(200);
    expect((await apiWith({ ...env, DB: d1.db }, "/v2/store/orders?status=cancelled")).status).toBe(200);
    expect(d1.constraints).toEqual([bookmark, bookmark]);
  });

  it("reads the client's own cancel when it sends the bookmark back", async () => {
    const cancel = await api("/v1/store/orders/2", { method: "DELETE" });
    const bookmark = cancel.headers.get(BOOKMARK_HEADER)!;

    const d1 = sessionRecordingD1();
    const list = await apiWith({ ...env, DB: d1.db }, "/v1/store/orders", { headers: { [BOOKMARK_HEADER]: bookmark } });
    expect(d1.constraints).toEqual([bookmark]);
    const orders = (await list.json()) as { id: number; status: string }[];
    expect(orders.find((order) => order.id === 2)?.status).toBe("cancelled");
  });

  it("revalidates (304) within the bookmark's session too", async () => {
    const first = await api("/v1/store/orders");
    const d1 = sessionRecordingD1();
    const bookmark = first.headers.get(BOOKMARK_HEADER)!;
    const again = await apiWith({ ...env, DB: d1.db }, "/v1/store/orders", {
      headers: { [BOOKMARK_HEADER]: bookmark, "If-None-Match": first.headers.get("ETag")! },
    });
    expect(again.status).toBe(304);
    expect(d1.constraints).toEqual([bookmark]);
  });

  it.each([
    "garbage",
    "",
    "00000000-00000003-00000000",
    "00000000-00000003-00000000-0000000000000000000000000000000G",
    `00000000-00000003-00000000-${"0".repeat(4096)}`,
    "first-primary",
  ])("refuses the malformed bookmark %j with 400 invalid_bookmark, before D1 sees it", async (bookmark) => {
    const d1 = sessionRecordingD1();
    const response = await apiWith({ ...env, DB: d1.db }, "/v1/store/orders", {
      headers: { [BOOKMARK_HEADER]: bookmark },
    });
    expect(response.status).toBe(400);
    expect(await errorBodyOf(response)).toMatchObject({ code: "invalid_bookmark", status: 400 });
    expect(d1.constraints).toEqual([]);
  });
});

describe("isBookmark", () => {
  it("accepts D1's format only", () => {
    expect(isBookmark("0000000a-00000003-0000004f-0123456789abcdef0123456789abcdef")).toBe(true);
    expect(isBookmark("0000000A-00000003-0000004f-0123456789abcdef0123456789abcdef")).toBe(false);
    expect(isBookmark(" 0000000a-00000003-0000004f-0123456789abcdef0123456789abcdef")).toBe(false);
    expect(isBookmark("first-unconstrained")).toBe(false);
  });
});
