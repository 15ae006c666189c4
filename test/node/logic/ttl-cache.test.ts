import { describe, expect, it } from "vitest";
import { TtlCache } from "../../../src/lib/ttl-cache";

describe("TtlCache", () => {
  it("returns a value until its lifetime ends", () => {
    const cache = new TtlCache<string, number>(10);
    cache.set("a", 1, 1000, 0);
    expect(cache.get("a", 999)).toBe(1);
    expect(cache.get("a", 1000)).toBeUndefined();
  });

  it("caches null as a value (a known miss)", () => {
    const cache = new TtlCache<string, number | null>(10);
    cache.set("a", null, 1000, 0);
    expect(cache.get("a", 1)).toBeNull();
  });

  it("evicts the least recently used entry when full", () => {
    const cache = new TtlCache<string, number>(2);
    cache.set("a", 1, 1000, 0);
    cache.set("b", 2, 1000, 0);
    cache.get("a", 1);
    cache.set("c", 3, 1000, 2);
    expect(cache.get("b", 3)).toBeUndefined();
    expect(cache.get("a", 3)).toBe(1);
    expect(cache.get("c", 3)).toBe(3);
  });
});
