import { describe, expect, it } from "vitest";
import { VersionMemory } from "../../src/orders/recent-version";

describe("the version an isolate remembers", () => {
  it("is reused within the reuse time, and forgotten by a cancel", () => {
    const memory = new VersionMemory();
    memory.remember("v1", 1_000, memory.beginRead());
    expect(memory.get(1_500, 1_000)).toBe("v1");
    expect(memory.get(2_000, 1_000)).toBeUndefined();
    memory.forget();
    expect(memory.get(1_500, 1_000)).toBeUndefined();
  });

  it("never keeps a version whose read began before a cancel's forget", () => {
    const memory = new VersionMemory();
    const began = memory.beginRead();
    // A cancel through this isolate lands while the read is in flight; the read may have seen the list from before it.
    memory.forget();
    memory.remember("before-the-cancel", 1_000, began);
    expect(memory.get(1_000, 1_000)).toBeUndefined();
    memory.remember("after-the-cancel", 1_000, memory.beginRead());
    expect(memory.get(1_000, 1_000)).toBe("after-the-cancel");
  });
});
