/**
 * Callers without a key are limited per address group (docs/api.md#rate-limits): an IPv4 address, or an IPv6 /64, since
 * one provider hands a user a whole /64. Written canonically (RFC 5952), so every spelling counts against one budget.
 */
export function addressGroup(connectingIp: string | undefined): string {
  // Cloudflare always sets CF-Connecting-IP; only local runs go without it.
  if (connectingIp === undefined) return "local";
  const ip = connectingIp.trim();
  const v4 = parseIpv4(ip);
  if (v4) return v4.join(".");
  const v6 = parseIpv6(ip);
  if (!v6) return "unparsable";
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) is an IPv4 caller.
  if (v6[0] === 0 && v6[1] === 0 && v6[2] === 0 && v6[3] === 0 && v6[4] === 0 && v6[5] === 0xffff) {
    return `${v6[6]! >> 8}.${v6[6]! & 0xff}.${v6[7]! >> 8}.${v6[7]! & 0xff}`;
  }
  v6.fill(0, 4);
  return `${formatIpv6(v6)}/64`;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

// One match, no arrays: every request reads its address.
function parseIpv4(text: string): number[] | undefined {
  const match = IPV4.exec(text);
  if (!match) return undefined;
  const octets = [Number(match[1]), Number(match[2]), Number(match[3]), Number(match[4])];
  return octets[0]! <= 255 && octets[1]! <= 255 && octets[2]! <= 255 && octets[3]! <= 255 ? octets : undefined;
}

/**
 * An IPv6 address's eight groups, or undefined: brackets and zone allowed, one `::` at most, IPv4 as the last piece.
 * Read by index, no regex: a hot path for keyless IPv6 callers.
 */
function parseIpv6(text: string): number[] | undefined {
  let start = 0;
  let end = text.length;
  if (end >= 2 && text.charCodeAt(0) === 0x5b && text.charCodeAt(end - 1) === 0x5d) {
    start = 1;
    end -= 1;
  }
  const zone = text.indexOf("%", start);
  if (zone !== -1 && zone < end) end = zone;
  const gap = text.indexOf("::", start);
  const groups: number[] = [];
  if (gap === -1 || gap + 2 > end)
    return readGroups(text, start, end, groups) && groups.length === 8 ? groups : undefined;
  const nextGap = text.indexOf("::", gap + 2);
  if (nextGap !== -1 && nextGap + 2 <= end) return undefined;
  const tail: number[] = [];
  if (!readGroups(text, start, gap, groups) || !readGroups(text, gap + 2, end, tail)) return undefined;
  const missing = 8 - groups.length - tail.length;
  if (missing < 1) return undefined;
  for (let index = 0; index < missing; index++) groups.push(0);
  for (const group of tail) groups.push(group);
  return groups;
}

/** Appends the groups of `text` between `from` and `to`; false when one is not a group. */
function readGroups(text: string, from: number, to: number, groups: number[]): boolean {
  if (from === to) return true;
  let pieceStart = from;
  for (let index = from; index <= to; index++) {
    if (index < to && text.charCodeAt(index) !== 0x3a) continue;
    const dot = index === to ? text.indexOf(".", pieceStart) : -1;
    if (dot !== -1 && dot < to) {
      const v4 = parseIpv4(text.slice(pieceStart, to));
      if (!v4) return false;
      groups.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      return true;
    }
    const length = index - pieceStart;
    if (length < 1 || length > 4) return false;
    let group = 0;
    for (let digit = pieceStart; digit < index; digit++) {
      const value = hexValue(text.charCodeAt(digit));
      if (value < 0) return false;
      group = group * 16 + value;
    }
    groups.push(group);
    pieceStart = index + 1;
  }
  return true;
}

/** A hex digit's value, or -1. */
function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** RFC 5952: lower case, no leading zeros, the longest run of two or more zero groups (the first on a tie) as "::". */
function formatIpv6(groups: number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < groups.length; ) {
    let end = start;
    while (end < groups.length && groups[end] === 0) end++;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end === start ? start + 1 : end;
  }
  let text = "";
  for (let index = 0; index < groups.length; index++) {
    if (index === bestStart) {
      text += "::";
      index += bestLength - 1;
    } else {
      text += (text === "" || index === bestStart + bestLength ? "" : ":") + groups[index]!.toString(16);
    }
  }
  return text;
}
