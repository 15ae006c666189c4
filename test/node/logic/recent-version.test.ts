import { describe, expect, it } from "vitest";
import { VersionMemory } from "../../../src/read-your-writes/recent-version";
import { OwnWrites, startRead } from "../../../src/read-your-writes/own-writes";

const older = "00000001-00000002-00000003-0123456789abcdef0123456789abcdef";
const newer = "00000001-00000002-00000009-0123456789abcdef0123456789abcdef";

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

describe("where a read starts after this isolate's own cancels", () => {
  it("reads at least as new as the newer of the client's bookmark and the isolate's latest cancel", () => {
    const writes = new OwnWrites(60_000);
    expect(writes.floor(older, 0)).toBe(older);
    writes.note(newer, 0);
    expect(writes.floor(older, 1)).toBe(newer);
    expect(writes.floor(undefined, 1)).toBe(newer);
    expect(writes.floor(undefined, 60_000)).toBeUndefined();
  });

  it("keeps the newer of two cancels' bookmarks, whichever finished last", () => {
    const writes = new OwnWrites(60_000);
    writes.note(newer, 0);
    writes.note(older, 1);
    expect(writes.floor(undefined, 2)).toBe(newer);
    writes.note(null, 3);
    expect(writes.floor(undefined, 4)).toBe(newer);
  });

  it("takes the floor and the version mark together, so a version read from before a later cancel is never kept", () => {
    const versions = new VersionMemory();
    const writes = new OwnWrites(60_000);
    const start = startRead(versions, writes, undefined, 0);
    expect(start.floor).toBeUndefined();
    // A cancel through this isolate while the read is in flight: not in the read's floor, so what it reads is not kept.
    versions.forget();
    writes.note(newer, 1);
    versions.remember("read-below-the-cancel", 2, start.began);
    expect(versions.get(2, 1_000)).toBeUndefined();
    expect(startRead(versions, writes, undefined, 3).floor).toBe(newer);
  });
});
