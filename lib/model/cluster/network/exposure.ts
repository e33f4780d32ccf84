import { bigIntToIp, cidrRange, firstPublicAddress } from './address-space';
import { NODE_SERVICE_PORTS } from './node-ports';
import { Found, int, Loose, obj } from '../rules/loose';
import { found } from '../rules/rule-registry';

/**
 * No node service is reachable from public address space. A security-group rule that opens a node-service port
 * (SSH, the kubelet, etcd ...: node-ports.ts NODE_SERVICE_PORTS) or protocol `all` is refused when its source CIDR
 * holds even one public address (address-space.ts: not in the IANA special-purpose registries' non-global blocks).
 * The test is on addresses, not on the text of the CIDR, so the whole internet written as two halves, as `2000::/3`
 * or as `::/1` + `8000::/1` is refused like `0.0.0.0/0`. Because one public address already refuses a rule, the
 * public space the rules open to a node service, summed over all of them, is empty exactly when no rule is refused;
 * every refused rule is reported, so a split written as several rules is named rule by rule.
 *
 * Sources that are not CIDRs (a security group, a prefix list, the pool, the load balancer) are not addresses
 * worker-stacks can see at validation; docs/security-inputs.md says so.
 */

/** What a rule opens that no public address may reach, in words, or undefined. */
export function nodeServiceOpened(rule: Loose): string | undefined {
  if (rule.protocol === 'all') return 'all traffic (every port, node services included)';
  if (rule.protocol !== 'tcp' && rule.protocol !== 'udp') return undefined;
  const from = int(rule.port) ?? int(rule.fromPort);
  const to = int(rule.port) ?? int(rule.toPort);
  if (from === undefined || to === undefined || from > to) return undefined; // the port rules report these
  const hit = NODE_SERVICE_PORTS.filter((s) => s.from <= to && s.to >= from);
  if (hit.length === 0) return undefined;
  const shown = hit.slice(0, 3).map((s) => `${s.what} (${s.from === s.to ? s.from : `${s.from}-${s.to}`})`);
  return `${rule.protocol} ${from === to ? from : `${from}-${to}`}, the port${hit.length > 1 || hit[0].from !== hit[0].to ? 's' : ''} of ${shown.join(', ')}${hit.length > 3 ? ` and ${hit.length - 3} more node services` : ''}`;
}

export const EXPOSURE_RULE =
  'node services and protocol all are open only to non-public sources (private, shared, link-local or documentation ranges of the IANA special-purpose registries); narrow the source to your own networks, or use a securityGroupId (a bastion) or a prefixListId';

export function exposureProblems(spec: Loose): Found[] {
  const rules = Array.isArray(spec.securityGroupRules) ? spec.securityGroupRules : [];
  const out: Found[] = [];
  rules.forEach((raw, i) => {
    const r = obj(raw);
    const opened = nodeServiceOpened(r);
    if (!opened) return;
    const src = obj(r.source);
    for (const key of ['cidr', 'cidrIpv6'] as const) {
      const cidr = src[key];
      if (typeof cidr !== 'string') continue; // not a CIDR: the schema says so
      const range = cidrRange(cidr);
      if (!range) continue; // not a CIDR: the schema says so
      const first = firstPublicAddress(range);
      if (first === undefined) continue;
      out.push(
        found(
          'no-public-node-service',
          `spec.securityGroupRules[${i}].source.${key}`,
          `${cidr} holds public addresses (${bigIntToIp(first, range.family)} the first), and the rule opens ${opened}; ${EXPOSURE_RULE}`,
        ),
      );
    }
  });
  return out;
}
