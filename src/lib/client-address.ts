/**
 * Callers without a key are limited per address (docs/api.md#rate-limits). An
 * IPv6 user gets a whole /64 (2^64 addresses) from one provider, so counting
 * each IPv6 address alone would hand every such caller unlimited budgets:
 * IPv6 callers are grouped by their /64, IPv4 callers by their address. The
 * group is written canonically (RFC 5952) so every spelling of one network
 * counts against one budget.
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
  if (v6.slice(0, 5).every((group) => group === 0) && v6[5] === 0xffff) {
    return [v6[6]! >> 8, v6[6]! & 0xff, v6[7]! >> 8, v6[7]! & 0xff].join(".");
  }
  return `${formatIpv6([...v6.slice(0, 4), 0, 0, 0, 0])}/64`;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

// One match, no intermediate arrays: every request without a key, and every request with one (its fallback), reads its address.
function parseIpv4(text: string): number[] | undefined {
  const match = IPV4.exec(text);
  if (!match) return undefined;
  const octets = [Number(match[1]), Number(match[2]), Number(match[3]), Number(match[4])];
  return octets[0]! <= 255 && octets[1]! <= 255 && octets[2]! <= 255 && octets[3]! <= 255 ? octets : undefined;
}

/** The eight 16-bit groups of an IPv6 address, or undefined when `text` is not one. */
function parseIpv6(text: string): number[] | undefined {
  const address = text.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string): number[] | undefined => {
    if (part === "") return [];
    const groups: number[] = [];
    const pieces = part.split(":");
    for (const [index, piece] of pieces.entries()) {
      // An embedded IPv4 address may end the address (::ffff:192.0.2.1).
      const v4 = index === pieces.length - 1 ? parseIpv4(piece) : undefined;
      if (v4) groups.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) groups.push(parseInt(piece, 16));
      else return undefined;
    }
    return groups;
  };
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...Array<number>(missing).fill(0), ...tail] : undefined;
}

/** RFC 5952: lower case, no leading zeros, the longest run of two or more zero groups (the first on a tie) as "::". */
function formatIpv6(groups: number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < groups.length; ) {
    let end = start;
    while (end < groups.length && groups[end] === 0) end++;
    if (end - start > bestLength) [bestStart, bestLength] = [start, end - start];
    start = end === start ? start + 1 : end;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}
