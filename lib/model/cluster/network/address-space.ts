import * as net from 'node:net';

/**
 * Public address space, decided by arithmetic, never by comparing strings: `0.0.0.0/1` + `128.0.0.0/1`, `2000::/3`
 * and `::/1` + `8000::/1` are the whole internet as much as `0.0.0.0/0` is.
 *
 * Non-public is what the IANA special-purpose address registries mark "Globally Reachable: False":
 *   - IPv4: https://www.iana.org/assignments/iana-ipv4-special-registry/
 *   - IPv6: https://www.iana.org/assignments/iana-ipv6-special-registry/
 * transcribed below, one entry per row. A more specific entry marked True inside a False one (192.0.0.9/32 and
 * 192.0.0.10/32, the PCP and TURN anycast addresses, inside 192.0.0.0/24) is public again. Entries whose Globally
 * Reachable is "N/A" (Teredo 2001::/32, 6to4 2002::/16, the IETF protocol assignments 2001::/23 as a whole, the
 * deprecated 6to4 relay 192.88.99.0/24) and every address no registry lists (multicast included) count as public:
 * a registry update can only make this stricter until the table below is updated, never looser.
 */

export type Family = 4 | 6;

interface RegistryEntry {
  readonly block: string;
  readonly name: string;
  readonly globallyReachable: boolean;
}

/** IANA IPv4 Special-Purpose Address Registry: the entries with Globally Reachable False, and the True ones inside them. */
export const IPV4_SPECIAL_PURPOSE: readonly RegistryEntry[] = [
  { block: '0.0.0.0/8', name: '"This network" (RFC 791)', globallyReachable: false },
  { block: '10.0.0.0/8', name: 'Private-Use (RFC 1918)', globallyReachable: false },
  { block: '100.64.0.0/10', name: 'Shared Address Space (RFC 6598)', globallyReachable: false },
  { block: '127.0.0.0/8', name: 'Loopback (RFC 1122)', globallyReachable: false },
  { block: '169.254.0.0/16', name: 'Link Local (RFC 3927)', globallyReachable: false },
  { block: '172.16.0.0/12', name: 'Private-Use (RFC 1918)', globallyReachable: false },
  { block: '192.0.0.0/24', name: 'IETF Protocol Assignments (RFC 6890)', globallyReachable: false },
  { block: '192.0.0.9/32', name: 'Port Control Protocol Anycast (RFC 7723)', globallyReachable: true },
  { block: '192.0.0.10/32', name: 'Traversal Using Relays around NAT Anycast (RFC 8155)', globallyReachable: true },
  { block: '192.0.2.0/24', name: 'Documentation (TEST-NET-1, RFC 5737)', globallyReachable: false },
  { block: '192.168.0.0/16', name: 'Private-Use (RFC 1918)', globallyReachable: false },
  { block: '198.18.0.0/15', name: 'Benchmarking (RFC 2544)', globallyReachable: false },
  { block: '198.51.100.0/24', name: 'Documentation (TEST-NET-2, RFC 5737)', globallyReachable: false },
  { block: '203.0.113.0/24', name: 'Documentation (TEST-NET-3, RFC 5737)', globallyReachable: false },
  { block: '240.0.0.0/4', name: 'Reserved (RFC 1112)', globallyReachable: false },
  { block: '255.255.255.255/32', name: 'Limited Broadcast (RFC 8190)', globallyReachable: false },
];

/** IANA IPv6 Special-Purpose Address Registry: the entries with Globally Reachable False. */
export const IPV6_SPECIAL_PURPOSE: readonly RegistryEntry[] = [
  { block: '::/128', name: 'Unspecified Address (RFC 4291)', globallyReachable: false },
  { block: '::1/128', name: 'Loopback Address (RFC 4291)', globallyReachable: false },
  { block: '::ffff:0:0/96', name: 'IPv4-mapped Address (RFC 4291)', globallyReachable: false },
  { block: '64:ff9b:1::/48', name: 'IPv4-IPv6 Translation, local use (RFC 8215)', globallyReachable: false },
  { block: '100::/64', name: 'Discard-Only Address Block (RFC 6666)', globallyReachable: false },
  { block: '2001:2::/48', name: 'Benchmarking (RFC 5180)', globallyReachable: false },
  { block: '2001:10::/28', name: 'Deprecated ORCHID (RFC 4843)', globallyReachable: false },
  { block: '2001:db8::/32', name: 'Documentation (RFC 3849)', globallyReachable: false },
  { block: '3fff::/20', name: 'Documentation (RFC 9637)', globallyReachable: false },
  { block: '5f00::/16', name: 'Segment Routing (SRv6) SIDs (RFC 9602)', globallyReachable: false },
  { block: 'fc00::/7', name: 'Unique-Local (RFC 4193)', globallyReachable: false },
  { block: 'fe80::/10', name: 'Link-Local Unicast (RFC 4291)', globallyReachable: false },
];

const BITS: Record<Family, number> = { 4: 32, 6: 128 };

/** An inclusive range of addresses as integers (BigInt: IPv6 needs 128 bits, exactly). */
export interface AddressRange {
  readonly family: Family;
  readonly first: bigint;
  readonly last: bigint;
}

export function ipToBigInt(addr: string): bigint {
  if (net.isIPv4(addr)) return addr.split('.').reduce((acc, o) => (acc << 8n) | BigInt(Number(o)), 0n);
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups first.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(addr);
  const text = v4
    ? addr.slice(0, v4.index) + ((+v4[1] << 8) | +v4[2]).toString(16) + ':' + ((+v4[3] << 8) | +v4[4]).toString(16)
    : addr;
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

export function bigIntToIp(n: bigint, family: Family): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  // The canonical form (RFC 5952): the longest run of two or more zero groups becomes '::'.
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.len && j - i >= 2) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  if (best.at < 0) return groups.join(':');
  return `${groups.slice(0, best.at).join(':')}::${groups.slice(best.at + best.len).join(':')}`;
}

/** The addresses of a CIDR (host bits, if any, are ignored: the schema reports them). undefined when not a CIDR. */
export function cidrRange(cidr: string): AddressRange | undefined {
  const m = /^([0-9a-fA-F:.]+)\/(\d{1,3})$/.exec(cidr);
  if (!m) return undefined;
  const family: Family | undefined = net.isIPv4(m[1]) ? 4 : net.isIPv6(m[1]) ? 6 : undefined;
  if (!family || Number(m[2]) > BITS[family]) return undefined;
  const host = (1n << BigInt(BITS[family] - Number(m[2]))) - 1n;
  const first = ipToBigInt(m[1]) & ~host & ((1n << BigInt(BITS[family])) - 1n);
  return { family, first, last: first | host };
}

type Interval = { first: bigint; last: bigint };

function merge(intervals: Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  const out: Interval[] = [];
  for (const i of sorted) {
    const prev = out.at(-1);
    if (prev && i.first <= prev.last + 1n) prev.last = i.last > prev.last ? i.last : prev.last;
    else out.push({ ...i });
  }
  return out;
}

function subtract(from: Interval[], cut: Interval[]): Interval[] {
  let out = from;
  for (const c of cut) {
    out = out.flatMap((i) => {
      if (c.last < i.first || c.first > i.last) return [i];
      const parts: Interval[] = [];
      if (c.first > i.first) parts.push({ first: i.first, last: c.first - 1n });
      if (c.last < i.last) parts.push({ first: c.last + 1n, last: i.last });
      return parts;
    });
  }
  return out;
}

function nonPublic(entries: readonly RegistryEntry[]): Interval[] {
  const range = (e: RegistryEntry): Interval => {
    const r = cidrRange(e.block);
    // The registry is a constant of this file: a block that does not parse is a typo here, not bad input.
    if (!r) throw new Error(`address-space registry: ${e.block} is not a CIDR block`);
    return r;
  };
  return merge(
    subtract(
      merge(entries.filter((e) => !e.globallyReachable).map(range)),
      entries.filter((e) => e.globallyReachable).map(range),
    ),
  );
}

/** The non-public address space per family: merged, disjoint, in address order. */
export const NON_PUBLIC: Readonly<Record<Family, readonly Interval[]>> = {
  4: nonPublic(IPV4_SPECIAL_PURPOSE),
  6: nonPublic(IPV6_SPECIAL_PURPOSE),
};

/** The first public address of `r`, or undefined when every address of `r` is non-public. */
export function firstPublicAddress(r: AddressRange): bigint | undefined {
  let at = r.first;
  for (const i of NON_PUBLIC[r.family]) {
    if (i.last < at) continue;
    if (i.first > at) return at; // a gap before this block
    at = i.last + 1n;
    if (at > r.last) return undefined;
  }
  return at <= r.last ? at : undefined;
}

/** How many addresses of `r` are public (exact). @internal The exposure tests count with it. */
export function publicAddressCount(r: AddressRange): bigint {
  let covered = 0n;
  for (const i of NON_PUBLIC[r.family]) {
    const first = i.first > r.first ? i.first : r.first;
    const last = i.last < r.last ? i.last : r.last;
    if (first <= last) covered += last - first + 1n;
  }
  return r.last - r.first + 1n - covered;
}

/**
 * The non-public space as the fewest CIDRs (each the largest aligned block inside a merged interval). Every CIDR that
 * lies in the non-public space lies inside one of these, so the API server's CEL can decide "non-public" with
 * cidr(block).containsCIDR(x) over this list (lib/platform/kube/cel-network-rules.ts).
 */
export function nonPublicCidrs(family: Family): string[] {
  const bits = BITS[family];
  const out: string[] = [];
  for (const { first, last } of NON_PUBLIC[family]) {
    let at = first;
    while (at <= last) {
      let size = 0;
      while (size < bits && (at & ((1n << BigInt(size + 1)) - 1n)) === 0n && at + (1n << BigInt(size + 1)) - 1n <= last)
        size++;
      out.push(`${bigIntToIp(at, family)}/${bits - size}`);
      at += 1n << BigInt(size);
    }
  }
  return out;
}
