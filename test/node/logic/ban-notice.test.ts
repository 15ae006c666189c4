import { describe, expect, it } from "vitest";
import { banNoticeChange, noticesBansOf } from "../../../src/account/ban-entries";

/** When an account's object writes or removes the notice of its ban (docs/operations.md#operator-api). */
describe("a ban's notice", () => {
  const now = 1_000;
  it("is written when a ban starts or its end moves, removed when it is lifted early, and left alone otherwise", () => {
    expect(banNoticeChange(0, now + 900, now)).toEqual({ put: { until: now + 900 } });
    expect(banNoticeChange(now - 5, now + 900, now)).toEqual({ put: { until: now + 900 } });
    expect(banNoticeChange(now + 100, now + 900, now)).toEqual({ put: { until: now + 900 } });
    expect(banNoticeChange(now + 900, 0, now)).toEqual({ remove: true });
    // Unchanged, or a ban that ended by itself (its entry expired with it): nothing to write.
    expect(banNoticeChange(now + 900, now + 900, now)).toBeUndefined();
    expect(banNoticeChange(now - 5, now - 5, now)).toBeUndefined();
    expect(banNoticeChange(0, 0, now)).toBeUndefined();
    expect(banNoticeChange(now - 5, 0, now)).toBeUndefined();
  });

  it("is kept for a key's account only: an address group or an operator's session is never listed, nor costs a write", () => {
    expect(noticesBansOf("key_0123456789abcdef")).toBe(true);
    expect(noticesBansOf("ip:198.51.100.7")).toBe(false);
    expect(noticesBansOf("ip:2001:db8:1:2::/64")).toBe(false);
    expect(noticesBansOf("operator-session:0b1c")).toBe(false);
  });
});
