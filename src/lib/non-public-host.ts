/**
 * Whether a URL's host can be no public service: an IP literal in a private, shared, loopback, link-local, unspecified,
 * reserved, multicast, benchmarking or documentation range, or a name that resolves only inside a network. It takes
 * `new URL(...).hostname`, which already writes every IPv4 notation as dotted decimal and IPv6 compressed in brackets.
 * Returns what the host is, or undefined.
 */
export function nonPublicHost(hostname: string): string | undefined {
  if (hostname.startsWith("[")) return nonPublicIpv6(hostname.slice(1, -1));
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(hostname)) return nonPublicIpv4(ipv4Number(hostname));
  // A fully qualified name may end in a dot (`localhost.`): it names the same host.
  const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
  if (name === "localhost" || name.endsWith(".localhost")) return "a name for the machine itself";
  // No public name has a single label: a resolver completes one with its own network's search domains.
  if (!name.includes(".")) return "a single-label name, which only a network's own resolver completes";
  const suffix = LOCAL_NAME_SUFFIXES.find((ending) => name.endsWith(ending));
  return suffix ? `a name that only resolves inside a network (${suffix})` : undefined;
}

/** Names public DNS never answers: mDNS, ICANN's private-use TLD, home networks, routers' suffix. */
const LOCAL_NAME_SUFFIXES = [".local", ".internal", ".home.arpa", ".lan"];

/** IPv4 ranges by first address and prefix length (RFC 6890). */
const IPV4_RANGES: readonly (readonly [network: string, prefix: number, kind: string])[] = [
  ["0.0.0.0", 8, "an unspecified address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a shared (carrier-grade NAT) address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local address"],
  ["172.16.0.0", 12, "a private address"],
  ["192.168.0.0", 16, "a private address"],
  ["192.0.0.0", 24, "an address of the IETF's protocol assignments"],
  ["192.0.2.0", 24, "a documentation address"],
  ["198.18.0.0", 15, "a benchmarking address"],
  ["198.51.100.0", 24, "a documentation address"],
  ["203.0.113.0", 24, "a documentation address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved address"],
];

const ipv4Number = (dotted: string) => dotted.split(".").reduce((address, octet) => address * 256 + Number(octet), 0);
const IPV4_NETWORKS = IPV4_RANGES.map(([network, prefix, kind]) => ({
  first: ipv4Number(network),
  size: 2 ** (32 - prefix),
  kind,
}));

function nonPublicIpv4(address: number): string | undefined {
  return IPV4_NETWORKS.find(({ first, size }) => address >= first && address < first + size)?.kind;
}

/**
 * IPv6's non-public ranges (unspecified, loopback, unique and link-local, site-local, multicast, discard,
 * documentation, Teredo, local NAT64), and the forms carrying an IPv4 address, judged by it (mapped, translated,
 * compatible, NAT64, 6to4).
 */
function nonPublicIpv6(text: string): string | undefined {
  const groups = ipv6Groups(text);
  if (!groups) return undefined;
  const ipv4At = (index: number) => groups[index]! * 65_536 + groups[index + 1]!;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  const [first, second, third] = groups as [number, number, number];
  if (zeros(0, 8)) return "an unspecified address";
  if (zeros(0, 7) && groups[7] === 1) return "a loopback address";
  if ((first & 0xfe00) === 0xfc00) return "a private (unique local) address";
  if ((first & 0xffc0) === 0xfe80) return "a link-local address";
  if ((first & 0xffc0) === 0xfec0) return "a site-local address";
  if ((first & 0xff00) === 0xff00) return "a multicast address";
  if (first === 0x100 && zeros(1, 4)) return "a discard address";
  if (first === 0x2001 && second === 0xdb8) return "a documentation address";
  if (first === 0x2001 && second === 0) return "a Teredo address, whose IPv4 address cannot be judged";
  if (first === 0x64 && second === 0xff9b && third === 1) return "a local-use NAT64 address";
  if (zeros(0, 5) && (groups[5] === 0xffff || groups[5] === 0)) return nonPublicIpv4(ipv4At(6));
  if (zeros(0, 4) && groups[4] === 0xffff && groups[5] === 0) return nonPublicIpv4(ipv4At(6));
  if (first === 0x64 && second === 0xff9b && zeros(2, 6)) return nonPublicIpv4(ipv4At(6));
  if (first === 0x2002) return nonPublicIpv4(ipv4At(1));
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address in hex (`::` expanded), or undefined for anything else. */
function ipv6Groups(text: string): number[] | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string) =>
    part === "" ? [] : part.split(":").map((group) => (/^[0-9a-f]{1,4}$/i.test(group) ? parseInt(group, 16) : NaN));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...new Array<number>(missing).fill(0), ...tail];
  return groups.some(Number.isNaN) ? undefined : groups;
}
