import { nonPublicCidrs } from '../../model/cluster/network/address-space';
import { EXPOSURE_RULE } from '../../model/cluster/network/exposure';
import { fmt, quoted } from '../../model/cluster/schema/openapi';
import { LIMITS } from '../../model/cluster/rules/limits';
import { RULE_SOURCE_KINDS } from '../../model/cluster/schema/network-schema';
import { bind, bound, indexed, named, PlacedValidation, unique, v } from './cel-build';
import { DENIED_LIST } from './cel-listener-rules';

// The CEL twins of the network and security-group rules (cross-field.ts networkProblems, ruleProblems, exposure.ts);
// the rest of the CRD's cross-field rules: cel-rules.ts.
const PORTED = `self.protocol in ['tcp', 'udp']`;
const HAS_RANGE = '(has(self.fromPort) || has(self.toPort))';
const SOURCE_FOUND = `(${RULE_SOURCE_KINDS.map((k) => `(has(self.${k}) ? [${quoted(k)}] : [])`).join(' + ')})`;
// The same as a string of literals: join() of a list makes a string the cost estimator cannot bound.
const SOURCE_NAMES = `(${RULE_SOURCE_KINDS.map((k) => `(has(self.${k}) ? ${quoted(`, ${k}`)} : '')`).join(' + ')})`;
const lo = (r: string) => `(has(${r}.port) ? ${r}.port : (has(${r}.fromPort) ? ${r}.fromPort : -1))`;
const hi = (r: string) => `(has(${r}.port) ? ${r}.port : (has(${r}.toPort) ? ${r}.toPort : -1))`;
/**
 * A rule's identity to AWS as one value: protocol, port range (port: 22 is 22-22) and source, as a one-entry map
 * {protocol and source: [from, to]} (no string(): the cost estimator cannot bound the length of a number's digits). Every
 * source field has its place (an absent one is empty), so two keys are equal exactly when the sources are; '|' is in
 * no valid value of those fields (their patterns), and an invalid one is refused by its own rule anyway.
 */
const sourceKey = (s: string) =>
  RULE_SOURCE_KINDS.map((k) =>
    k === 'self' || k === 'loadBalancer'
      ? `(has(${s}.${k}) ? (${s}.${k} ? 'true' : 'false') : '')`
      : `(has(${s}.${k}) ? ${s}.${k} : '')`,
  ).join(" + '|' + ");
// Not with the source bound once per rule: the cost estimator loses the strings' length through [x].map(...)[0].
const ruleKey = (r: string) => `{${r}.protocol + '|' + ${sourceKey(`${r}.source`)}: [${lo(r)}, ${hi(r)}]}`;

// Listener node-port rules on the worker group (listener-rules.ts nodeRules): one per distinct protocol/port, as
// integers (udp ports + 100000) because the cost estimator cannot bound strings a map() makes. The distinct count is
// the sum of 1/multiplicity (CEL has no distinct()); rounding takes care of the floating point.
const NODE_RULE_KEYS =
  `(self.listeners.map(l, (has(l.protocol) && l.protocol == 'UDP' ? 100000 : 0) + l.nodePort)` +
  ` + self.listeners.filter(l, has(l.protocol) && l.protocol == 'TCP_UDP').map(l, 100000 + l.nodePort)` +
  ` + self.listeners.map(l, has(l.healthCheck) && has(l.healthCheck.port) ? l.healthCheck.port : l.nodePort))`;
// The keys are bound once (`bind`): written inline, the list was rebuilt for every key, twice per listener.
const nodeRules = (ks: string) => `int(${ks}.map(k, 1.0 / double(size(${ks}.filter(j, j == k)))).sum() + 0.5)`;
const USER_RULES = '(has(self.securityGroupRules) ? size(self.securityGroupRules) : 0)';

// exposure.ts: a node-service port or protocol all from a CIDR that holds a public address. The registry arithmetic is
// done here, in TypeScript: the non-public space as its fewest CIDRs (address-space.ts nonPublicCidrs), so that CEL's
// CIDR library only has to ask whether one of them contains the rule's source (every CIDR inside the non-public space
// lies inside one of those blocks). The file store's message also names the first public address; CEL cannot compute it.
const OPENS_NODE_SERVICE =
  `(self.protocol == 'all' || (self.protocol in ['tcp', 'udp'] && (has(self.port) ? self.port in ${DENIED_LIST} : ` +
  `(has(self.fromPort) && has(self.toPort) && ${DENIED_LIST}.exists(p, p >= self.fromPort && p <= self.toPort)))))`;
const OPENED = `(self.protocol == 'all' ? 'all traffic (every port, node services included)' : self.protocol + ' ports of node services')`;
function exposure(key: 'cidr' | 'cidrIpv6', family: 4 | 6): PlacedValidation {
  // CEL's cidr() refuses IPv4-mapped IPv6 (::ffff:0:0/96), as a source too (the field's own rule), so it is left out.
  // Largest blocks first: exists() stops at the block that holds the source, and a private source (10.0.0.0/8, fc00::/7)
  // is likeliest in a large one; each block tried costs a parse.
  const byPrefix = (b: string) => Number(b.split('/')[1]);
  const blocks = `[${nonPublicCidrs(family)
    .filter((b) => !b.startsWith('::ffff:'))
    .sort((a, b) => byPrefix(a) - byPrefix(b))
    .map(quoted)
    .join(', ')}]`;
  const src = `self.source.${key}`;
  return v(
    'spec.securityGroupRules[]',
    // The source is read once and parsed once (`bind`), not once per block.
    `!has(${src}) || ${bind('v', src, `!isCIDR(v) || !${OPENS_NODE_SERVICE} || ${bind('c', 'cidr(v)', `${blocks}.exists(b, cidr(b).containsCIDR(c))`)}`)}`,
    { expr: `${src} + ' holds public addresses, and the rule opens ' + ${OPENED} + ${quoted(`; ${EXPOSURE_RULE}`)}` },
    `.source.${key}`,
  );
}

/** The network and security-group rules, in the CRD's order. */
export const NETWORK_CEL_RULES: readonly PlacedValidation[] = [
  // cross-field.ts networkProblems
  named(
    'subnet-per-zone',
    v(
      'spec.network',
      'size(self.subnetIds) == size(self.availabilityZones)',
      {
        expr: fmt(
          '%d subnets for %d availability zones (give one subnet per zone, in the same order)',
          'size(self.subnetIds)',
          'size(self.availabilityZones)',
        ),
      },
      '.subnetIds',
    ),
  ),
  named(
    'zone-in-region',
    v(
      'spec',
      'self.network.availabilityZones.all(z, z.startsWith(self.region))',
      {
        expr: fmt(
          'spec.network.availabilityZones[%d] %s is not in region %s',
          'self.network.availabilityZones.indexOf(self.network.availabilityZones.filter(z, !z.startsWith(self.region))[0])',
          'self.network.availabilityZones.filter(z, !z.startsWith(self.region))[0]',
          'self.region',
        ),
      },
      '.network.availabilityZones',
    ),
  ),
  named(
    'zones-unique',
    unique(
      'spec.network.availabilityZones',
      'scalar',
      indexed('spec.network.availabilityZones'),
      'zones must be unique',
    ),
  ),
  named(
    'subnets-unique',
    unique('spec.network.subnetIds', 'scalar', indexed('spec.network.subnetIds'), 'subnets must be unique'),
  ),

  // cross-field.ts ruleProblems
  named(
    'sg-rule-ports',
    v('spec.securityGroupRules[]', `!(${PORTED}) || !(has(self.port) && ${HAS_RANGE})`, {
      text: 'give either port or fromPort+toPort, not both',
    }),
  ),
  named(
    'sg-rule-ports',
    v(
      'spec.securityGroupRules[]',
      `!(${PORTED}) || has(self.port) || ${HAS_RANGE}`,
      { expr: `'required field is missing (' + self.protocol + ' rules need a port or a fromPort+toPort range)'` },
      '.port',
      'FieldValueRequired',
    ),
  ),
  named(
    'sg-rule-ports',
    v('spec.securityGroupRules[]', `!(${PORTED}) || has(self.fromPort) == has(self.toPort)`, {
      text: 'a port range needs both fromPort and toPort',
    }),
  ),
  named(
    'port-range-order',
    v(
      'spec.securityGroupRules[]',
      '!has(self.fromPort) || !has(self.toPort) || self.fromPort <= self.toPort',
      { expr: fmt('port range is reversed: fromPort %d is greater than toPort %d', 'self.fromPort', 'self.toPort') },
      '.fromPort',
    ),
  ),
  named(
    'sg-rule-ports',
    v(
      'spec.securityGroupRules[]',
      `${PORTED} || !(has(self.port) || ${HAS_RANGE})`,
      { expr: `self.protocol + ' rules take no port (remove port/fromPort/toPort)'` },
      undefined,
      'FieldValueForbidden',
    ),
  ),
  named(
    'icmpv6-source',
    v(
      'spec.securityGroupRules[]',
      `self.protocol != 'icmpv6' || !has(self.source.cidr)`,
      { text: 'icmpv6 with an IPv4 source cidr never matches (use icmp, or cidrIpv6)' },
      '.protocol',
    ),
  ),
  named(
    'sg-rule-one-source',
    v('spec.securityGroupRules[].source', `size(${SOURCE_FOUND}) == 1`, {
      expr: `${quoted(`give exactly one of ${RULE_SOURCE_KINDS.join(', ')} (found `)} + (${SOURCE_NAMES} == '' ? 'none' : ${SOURCE_NAMES}.substring(2)) + ')'`,
    }),
  ),
  named(
    'load-balancer-source',
    v(
      'spec',
      `!has(self.securityGroupRules) || (has(self.listeners) && size(self.listeners) > 0) || self.securityGroupRules.all(r, !has(r.source.loadBalancer))`,
      {
        expr: fmt(
          'spec.securityGroupRules[%d].source.loadBalancer the cluster has no listeners, so no load balancer',
          'self.securityGroupRules.indexOf(self.securityGroupRules.filter(r, has(r.source.loadBalancer))[0])',
        ),
      },
      '.securityGroupRules',
    ),
  ),
  named(
    'sg-rules-limit',
    v(
      'spec',
      `!has(self.listeners) || size(self.listeners) == 0 || ${bind('ks', NODE_RULE_KEYS, `${USER_RULES} + ${nodeRules('ks')} <= ${LIMITS.inboundRulesPerSecurityGroup}`)}`,
      {
        expr: bound(
          'n',
          bound('ks', NODE_RULE_KEYS, nodeRules('ks')),
          fmt(
            `%d rules + %d listener node-port rules = %d, over the AWS limit of ${LIMITS.inboundRulesPerSecurityGroup} inbound rules per security group (use port ranges or prefix lists)`,
            USER_RULES,
            'n',
            `${USER_RULES} + n`,
          ),
        ),
      },
      '.securityGroupRules',
    ),
  ),
  named('no-public-node-service', exposure('cidr', 4)),
  named('no-public-node-service', exposure('cidrIpv6', 6)),
  named(
    'sg-rules-unique',
    unique(
      'spec.securityGroupRules',
      ruleKey,
      indexed('spec.securityGroupRules'),
      'rules (same protocol, ports and source) must be unique',
    ),
  ),
];
