import * as net from 'node:net';
import { z } from 'zod';
import { bigIntToIp, cidrRange, ipToBigInt } from '../network/address-space';
import { cel, fmt, quoted } from './openapi';
import { custom } from './rules';

/** CIDR field rules (IPv4, IPv6, either): the check in words and its CEL twin for the CRD, as rules.ts's others. */

export function ipv4CidrProblem(v: string): string | undefined {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(v);
  if (!m || !net.isIPv4(m[1]) || Number(m[2]) > 32)
    return `${JSON.stringify(v)} is not an IPv4 CIDR (a.b.c.d/n, n 0-32)`;
  const bits = Number(m[2]);
  const addr = m[1].split('.').reduce((acc, o) => (acc << 8n) | BigInt(Number(o)), 0n);
  const host = bits === 32 ? 0n : (1n << BigInt(32 - bits)) - 1n;
  if ((addr & host) !== 0n) {
    const net4 = addr & ~host & 0xffffffffn;
    const dotted = [24n, 16n, 8n, 0n].map((s) => String((net4 >> s) & 255n)).join('.');
    return `${v} has host bits set (did you mean ${dotted}/${bits}?)`;
  }
  return undefined;
}

/** What the CRD's CEL reads as a non-canonical IPv6 CIDR (below); ipv6CidrProblem says the same in more cases. */
const NON_CANONICAL_V6 = /[A-F]|(^|:)0[0-9a-f]|(^|:)0:0(:|\/)/;

export function ipv6CidrProblem(v: string): string | undefined {
  const m = /^([0-9a-fA-F:.]+)\/(\d{1,3})$/.exec(v);
  if (!m || !net.isIPv6(m[1]) || Number(m[2]) > 128)
    return `${JSON.stringify(v)} is not an IPv6 CIDR (addr/n, n 0-128)`;
  const bits = Number(m[2]);
  const addr = ipToBigInt(m[1]);
  const host = (1n << BigInt(128 - bits)) - 1n;
  if ((addr & host) !== 0n) return `${v} has host bits set (the address must be the network address of a /${bits})`;
  const canonical = `${canonicalIpv6(addr)}/${bits}`;
  return canonical === v
    ? undefined
    : `${JSON.stringify(v)} is not written in canonical form (RFC 5952: lower case, no leading zeros, :: for zero groups), which AWS stores, and two forms of one CIDR are one rule (write ${canonical})`;
}

/** RFC 5952, as net/netip (and so CEL's string(cidr(x))) writes it: an IPv4-mapped address keeps its dotted tail. */
function canonicalIpv6(addr: bigint): string {
  if (addr >> 32n === 0xffffn) return `::ffff:${bigIntToIp(addr & 0xffffffffn, 4)}`;
  return bigIntToIp(addr, 6);
}

// CEL's CIDR library (Kubernetes 1.31+) parses the way net/netip does; the dotted-quad pattern keeps IPv4 strict.
const V4 = `isCIDR(self) && cidr(self).ip().family() == 4 && self.matches(${quoted(/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.source)})`;
const V6 = 'isCIDR(self) && cidr(self).ip().family() == 6';
export const ipv4Cidr = custom(z.string(), ipv4CidrProblem, {
  maxLength: 43,
  cel: [
    cel(V4, `'"' + self + '" is not an IPv4 CIDR (a.b.c.d/n, n 0-32)'`),
    cel(
      `!(${V4}) || string(cidr(self).masked()) == self`,
      fmt('%s has host bits set (did you mean %s?)', 'self', 'string(cidr(self).masked())'),
    ),
  ],
});
export const ipv6Cidr = custom(z.string(), ipv6CidrProblem, {
  maxLength: 64,
  cel: [
    cel(V6, `'"' + self + '" is not an IPv6 CIDR (addr/n, n 0-128)'`),
    cel(
      `!(${V6}) || cidr(self).masked() == cidr(self)`,
      fmt(
        '%s has host bits set (the address must be the network address of a /%d)',
        'self',
        'cidr(self).prefixLength()',
      ),
    ),
    // Not string(cidr(self)) == self: parsing once more exceeds the CRD's cost budget; upper case, a leading zero and
    // two zero groups written out are the forms that matter (the file store checks the whole of RFC 5952).
    cel(
      `!self.matches(${quoted(NON_CANONICAL_V6.source)})`,
      `'"' + self + '" is not written in canonical form (RFC 5952: lower case, no leading zeros, :: for zero groups), which AWS stores, and two forms of one CIDR are one rule'`,
    ),
  ],
});
/**
 * An IPv4 or an IPv6 CIDR: one check and one rule set, with the API server's messages (a zod union would say only
 * "Invalid input", losing the rule; a CRD's structural schema has no union of strings either).
 */
export function ipCidrProblem(v: string): string | undefined {
  const range = cidrRange(v);
  if (!range || (range.family === 4 && !/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(v)))
    return `${JSON.stringify(v)} is not an IPv4 or IPv6 CIDR`;
  const bits = v.slice(v.indexOf('/') + 1);
  const masked = `${bigIntToIp(range.first, range.family)}/${bits}`;
  return ipToBigInt(v.slice(0, v.indexOf('/'))) === range.first
    ? undefined
    : `${v} has host bits set (did you mean ${masked}?)`;
}
export const ipCidr = custom(z.string(), ipCidrProblem, {
  maxLength: 64,
  cel: [
    cel(`isCIDR(self) && (cidr(self).ip().family() == 6 || (${V4}))`, `'"' + self + '" is not an IPv4 or IPv6 CIDR'`),
    cel(
      `!isCIDR(self) || cidr(self).masked() == cidr(self)`,
      fmt('%s has host bits set (did you mean %s?)', 'self', 'string(cidr(self).masked())'),
    ),
  ],
});
