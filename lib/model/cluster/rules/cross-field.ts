import { bigIntToIp, cidrRange } from '../network/address-space';
import { duplicates } from './duplicates';
import { exposureProblems } from '../network/exposure';
import { listenerProblems } from '../network/listener-problems';
import { LIMITS } from './limits';
import { ListenerPorts, nodeRules } from '../network/listener-rules';
import { loadBalancerSubnetProblems, nodePortProblems } from '../network/node-ports';
import { poolProblems } from '../pools/pool-rules';
import { referenceProblems } from './references';
import { rolloutProblems } from './rollout-rules';
import { RULE_SOURCE_KINDS } from '../schema/network-schema';
import { arr, Found, int, Loose, obj, str } from './loose';
import { found } from './rule-registry';

/**
 * Rules that span several fields. They read the raw object defensively so
 * that they still report while other fields have type errors: every problem
 * is returned in one round.
 */

export function crossFieldProblems(raw: unknown, templates: ReadonlySet<string>): Found[] {
  const spec = obj(obj(raw).spec);
  return [
    ...poolProblems(spec, templates),
    ...networkProblems(spec),
    ...ruleProblems(spec),
    ...exposureProblems(spec),
    ...listenerProblems(spec),
    ...nodePortProblems(spec),
    ...loadBalancerSubnetProblems(spec),
    ...referenceProblems(spec, dnsName(obj(raw).metadata)),
    ...taintProblems(spec),
    ...tagProblems(spec),
    ...templateProblems(spec, templates),
    ...rolloutProblems(spec),
  ];
}

/** metadata.name when it is a DNS label (the schema reports it otherwise; a rule comparing with it would only repeat that). */
function dnsName(metadata: unknown): string | undefined {
  const name = str(obj(metadata).name);
  return name !== undefined && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) && name.length <= 40 ? name : undefined;
}

function networkProblems(spec: Loose): Found[] {
  const out: Found[] = [];
  const net = obj(spec.network);
  const azs = arr(net.availabilityZones);
  const subnets = arr(net.subnetIds);
  if (Array.isArray(net.availabilityZones) && Array.isArray(net.subnetIds) && azs.length !== subnets.length) {
    out.push(
      found(
        'subnet-per-zone',
        'spec.network.subnetIds',
        `${subnets.length} subnets for ${azs.length} availability zones (give one subnet per zone, in the same order)`,
      ),
    );
  }
  const region = str(spec.region);
  azs.forEach((az, i) => {
    if (region && typeof az === 'string' && !az.startsWith(region))
      out.push(found('zone-in-region', `spec.network.availabilityZones[${i}]`, `${az} is not in region ${region}`));
  });
  out.push(
    ...duplicates(
      'zones-unique',
      azs.map((a) => ({ a })),
      (x) => str(x.a),
      (i) => `spec.network.availabilityZones[${i}]`,
      'zones',
    ),
  );
  out.push(
    ...duplicates(
      'subnets-unique',
      subnets.map((s) => ({ s })),
      (x) => str(x.s),
      (i) => `spec.network.subnetIds[${i}]`,
      'subnets',
    ),
  );
  return out;
}

function ruleProblems(spec: Loose): Found[] {
  const out: Found[] = [];
  const rules = arr(spec.securityGroupRules);
  const hasListeners = arr(spec.listeners).length > 0;
  rules.forEach((raw, i) => {
    const r = obj(raw);
    const at = `spec.securityGroupRules[${i}]`;
    const proto = str(r.protocol);
    const ported = proto === 'tcp' || proto === 'udp';
    const single = r.port !== undefined;
    const range = r.fromPort !== undefined || r.toPort !== undefined;
    if (ported && single && range)
      out.push(found('sg-rule-ports', at, 'give either port or fromPort+toPort, not both'));
    if (ported && !single && !range)
      out.push(
        found(
          'sg-rule-ports',
          `${at}.port`,
          `required field is missing (${proto} rules need a port or a fromPort+toPort range)`,
        ),
      );
    if (ported && range && (r.fromPort === undefined || r.toPort === undefined))
      out.push(found('sg-rule-ports', at, 'a port range needs both fromPort and toPort'));
    const from = int(r.fromPort);
    const to = int(r.toPort);
    if (from !== undefined && to !== undefined && from > to)
      out.push(
        found(
          'port-range-order',
          `${at}.fromPort`,
          `port range is reversed: fromPort ${from} is greater than toPort ${to}`,
        ),
      );
    if ((proto === 'icmp' || proto === 'icmpv6' || proto === 'all') && (single || range))
      out.push(found('sg-rule-ports', at, `${proto} rules take no port (remove port/fromPort/toPort)`));
    const src = obj(r.source);
    const kinds = RULE_SOURCE_KINDS.filter((k) => src[k] !== undefined);
    if (r.source !== undefined && kinds.length !== 1) {
      out.push(
        found(
          'sg-rule-one-source',
          `${at}.source`,
          `give exactly one of ${RULE_SOURCE_KINDS.join(', ')} (found ${kinds.length ? kinds.join(', ') : 'none'})`,
        ),
      );
    }
    if (src.loadBalancer === true && !hasListeners)
      out.push(
        found('load-balancer-source', `${at}.source.loadBalancer`, 'the cluster has no listeners, so no load balancer'),
      );
    if (proto === 'icmpv6' && src.cidr !== undefined)
      out.push(
        found(
          'icmpv6-source',
          `${at}.protocol`,
          'icmpv6 with an IPv4 source cidr never matches (use icmp, or cidrIpv6)',
        ),
      );
  });
  out.push(
    ...duplicates(
      'sg-rules-unique',
      rules,
      // port: 22 and fromPort/toPort 22-22 are one rule to AWS (a duplicate fails at deploy time), so compare the range.
      (r) => [
        r.protocol,
        r.port ?? r.fromPort ?? null,
        r.port ?? r.toPort ?? null,
        // 2001:DB8::/32 and 2001:0db8:0::/32 are one source to AWS: compare CIDRs in their canonical form.
        RULE_SOURCE_KINDS.map((k) => canonicalCidr(obj(r.source)[k]) ?? null),
      ],
      (i) => `spec.securityGroupRules[${i}]`,
      'rules (same protocol, ports and source)',
    ),
  );
  // Listener node ports add rules (from the load balancer) to the same group, so they count against the same quota.
  const fromListeners = nodeRules(arr(spec.listeners).map((l) => obj(l) as ListenerPorts)).length;
  const total = rules.length + fromListeners;
  if (total > LIMITS.inboundRulesPerSecurityGroup) {
    out.push(
      found(
        'sg-rules-limit',
        'spec.securityGroupRules',
        `${rules.length} rules + ${fromListeners} listener node-port rules = ${total}, over the AWS limit of ${LIMITS.inboundRulesPerSecurityGroup} inbound rules per security group (use port ranges or prefix lists)`,
      ),
    );
  }
  return out;
}

function taintProblems(spec: Loose): Found[] {
  const taints = arr(obj(obj(spec.cloudConfig).values).nodeTaints);
  return duplicates(
    'taints-unique',
    taints,
    (t) => (str(t.key) && str(t.effect) ? [t.key, t.effect] : undefined),
    (i) => `spec.cloudConfig.values.nodeTaints[${i}]`,
    'taints (same key and effect; the kubelet refuses them)',
  );
}

function tagProblems(spec: Loose): Found[] {
  const n = Object.keys(obj(spec.tags)).length;
  return n > LIMITS.userTagsPerStack
    ? [
        found(
          'tags-limit',
          'spec.tags',
          `${n} tags, at most ${LIMITS.userTagsPerStack} allowed (AWS takes 50 per resource, and worker-stacks adds its own)`,
        ),
      ]
    : [];
}

function templateProblems(spec: Loose, templates: ReadonlySet<string>): Found[] {
  const name = str(obj(spec.cloudConfig).template);
  if (name === undefined || templates.has(name)) return [];
  return [
    found(
      'template-known',
      'spec.cloudConfig.template',
      `unknown template ${JSON.stringify(name)} (known: ${[...templates].sort().join(', ') || 'none'})`,
    ),
  ];
}

/** A CIDR in its canonical form (RFC 5952 for IPv6: lower case, no leading zeros, the longest zero run as ::); anything else as it is. */
function canonicalCidr(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const range = cidrRange(v);
  return range ? `${bigIntToIp(range.first, range.family)}/${Number(v.slice(v.indexOf('/') + 1))}` : v;
}
