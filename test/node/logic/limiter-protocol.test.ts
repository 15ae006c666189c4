import { describe, expect, it } from "vitest";
import { absorbAnswer, leaseRequest, newLeaseBook, settleRequest } from "../../../src/account/lease-book";
import { acquire, decide } from "../../../src/account/policy";
import type { LeaseAnswer } from "../../../src/account/protocol";

/**
 * The messages between isolates and an account's object, pinned: from the first release on, during a gradual
 * deployment an old isolate may talk to a new object and a new isolate to an old one
 * (docs/design/rate-limits.md#leases). A field added or renamed here is a protocol change: make it optional and
 * tolerant in both directions, then update these lists on purpose.
 */
const ban = { threshold: 20, seconds: 900 };
const limits = { perMinute: 100, perDay: 1000 };
const NOW = Date.UTC(2030, 0, 1, 12, 0, 10);

describe("the isolate-object protocol", () => {
  it("pins the fields of a lease request, its answer and a settle request", () => {
    const book = newLeaseBook();
    book.pending = { count: 2, since: NOW - 1000 };
    book.abandoned = ["lost-ask"];
    const request = leaseRequest(book, { ban, keyId: "key_0123456789abcdef" }, 0, NOW, false, "ask");
    expect(Object.keys(request).sort()).toEqual([
      "abandoned",
      "ban",
      "deferRefusal",
      "id",
      "keyId",
      "refusals",
      "speculative",
      "want",
    ]);
    expect(Object.keys(request.refusals!).sort()).toEqual(["count", "id", "since"]);

    const answer = acquire(undefined, request, NOW).verdict;
    expect(Object.keys(answer).sort()).toEqual([
      "banEnds",
      "day",
      "expiresAt",
      "granted",
      "minute",
      "now",
      "outcome",
      "refusedInARow",
      "reported",
    ]);
    expect(Object.keys(answer.minute).sort()).toEqual(["limit", "name", "remaining", "reset", "size"]);

    book.leases.push({ minuteStart: 0, dayStart: 0, count: 1, expiresAt: NOW - 1 });
    expect(Object.keys(settleRequest(book, ban, NOW, "batch")!).sort()).toEqual(["abandoned", "ban", "unspent"]);
  });

  it("counts a refusal once: one the object counted itself says nothing of deferring it, and the isolate adds none", () => {
    const full = decide(undefined, { perMinute: 1, perDay: 10 }, ban, NOW).state;
    const { refusalDeferred: _, ...counted } = decide(full, { perMinute: 1, perDay: 10 }, ban, NOW + 1)
      .verdict as LeaseAnswer;
    const book = newLeaseBook();
    const request = leaseRequest(book, { limits, ban }, 0, NOW + 1, false, "ask");
    expect(absorbAnswer(book, counted, NOW + 1, true, request, NOW + 1)).toMatchObject({ outcome: "limited" });
    expect(book.pending.count).toBe(0);
    expect(book.streak).toBe(1);
  });
});
