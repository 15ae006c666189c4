import { describe, expect, it } from "vitest";
import { addressGroup } from "../../../src/lib/client-address";

describe("addressGroup", () => {
  it.each([
    ["2001:db8::1", "2001:db8::/64"],
    ["2001:db8::2", "2001:db8::/64"],
    ["2001:DB8:0:0::1", "2001:db8::/64"],
    ["2001:0db8:0000:0000:ffff:ffff:ffff:ffff", "2001:db8::/64"],
    ["2001:db8:0:1::1", "2001:db8:0:1::/64"],
    ["2001:db8:aaaa:bbbb:1:2:3:4", "2001:db8:aaaa:bbbb::/64"],
    ["fe80::1%eth0", "fe80::/64"],
    ["[2001:db8::1]", "2001:db8::/64"],
    ["::1", "::/64"],
    ["::", "::/64"],
    ["1:0:0:1::", "1:0:0:1::/64"],
    ["0:0:1:0::", "0:0:1::/64"],
    ["::ffff:192.0.2.1", "192.0.2.1"],
    ["::ffff:c000:201", "192.0.2.1"],
    ["192.0.2.1", "192.0.2.1"],
    ["192.000.002.001", "192.0.2.1"],
    [" 192.0.2.1 ", "192.0.2.1"],
    ["2001:db8::1%zone.with.dots", "2001:db8::/64"],
    ["[fe80::1%eth0]", "fe80::/64"],
    ["64:ff9b::192.0.2.1", "64:ff9b::/64"],
    ["1.2.3.4::", "102:304::/64"],
    ["0:0:0:0:0:ffff:192.0.2.1", "192.0.2.1"],
  ])("%s is in group %s", (address, group) => {
    expect(addressGroup(address)).toBe(group);
  });

  it("groups every address of one /64 together and keeps neighbouring /64s apart", () => {
    const groups = new Set(["2001:db8:1:2::1", "2001:db8:1:2:ffff::", "2001:DB8:1:2:0:0:0:9"].map(addressGroup));
    expect([...groups]).toEqual(["2001:db8:1:2::/64"]);
    expect(addressGroup("2001:db8:1:3::1")).not.toBe(addressGroup("2001:db8:1:2::1"));
  });

  it.each([
    "",
    "nonsense",
    "1.2.3",
    "256.1.1.1",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    "12345::",
    "g::1",
    "1:2:3:4:5:6:7::8",
    "2001:db8::1:2:3:4:5:6",
    ":::",
    "1:::2",
    "::::",
    "[]",
    "[2001:db8::1",
    "1::2.3",
    "1:2::3.4.5.6.7",
    "1::2.3.4.5:6",
  ])("puts %j in one shared group", (address) => {
    expect(addressGroup(address)).toBe("unparsable");
  });

  it("is local without an address", () => {
    expect(addressGroup(undefined)).toBe("local");
  });
});
