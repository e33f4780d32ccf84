import { nonPublicCidrs } from '../../model/cluster/address-space';
import { ARM64_FAMILY, INSTANCE_FAMILY } from '../../model/cluster/instance-architecture';
import { EXPOSURE_RULE } from '../../model/cluster/exposure';
import { fmt, quoted } from '../../model/cluster/openapi';
import { LIMITS } from '../../model/cluster/limits';
import { DEFAULT_NODE_PORT_RANGE, MIN_NODE_PORT, NODE_SERVICE_PORTS } from '../../model/cluster/node-ports';
import { RULE_SOURCE_KINDS } from '../../model/cluster/schema';
import { bind, bound, indexed, named, PlacedValidation, unique, v } from './cel-build';
import { POOL_RULES } from './cel-pool-rules';
import { templateRequiredRules } from './cel-template-rules';

/**
 * The cross-field rules of lib/model/cluster (cross-field.ts, node-ports.ts, references.ts) as CEL, so that the API
 * server refuses a bad WorkerCluster at `kubectl apply`, with the file store's message where CEL can build it.
 * Each rule sits on the schema node (`at`) nearest to the fields it reads, so the error's path names the list
 * item (`spec.listeners[2].certificateArn`); a rule over a whole list names the item in its message.
 *
 * What CEL cannot say stays with the reconciler, which reports it in the object's conditions with the same
 * message as `validate` (docs/kubernetes.md lists them): whether the template exists in
 * cloudconfig/ and its own values (the templates are files of the daemon, not of the API server), a listener
 * certificate's region and account (below), and anything that needs synthesis (cdk-nag).
 */

/** List and map sizes: they bound the CEL cost estimate. Each is at or above the AWS limit the rules check. */
export const CAPS: Readonly<Record<string, { maxItems?: number; maxProperties?: number }>> = {
  'spec.network.availabilityZones': { maxItems: 32 },
  'spec.network.subnetIds': { maxItems: 32 },
  'spec.pool.instanceTypes': { maxItems: 64 },
  'spec.loadBalancer.allowedCidrs': { maxItems: 64 },
  'spec.loadBalancer.subnetIds': { maxItems: 32 },
  'spec.securityGroupRules': { maxItems: LIMITS.inboundRulesPerSecurityGroup },
  'spec.listeners': { maxItems: 64 },
  'spec.cloudConfig.values.nodeLabels': { maxProperties: 64 },
  'spec.cloudConfig.values.nodeTaints': { maxItems: 32 },
  'spec.cloudConfig.values.registryMirrors': { maxItems: 16 },
  'spec.tags': { maxProperties: 64 },
  'spec.rollout.maintenanceWindows': { maxItems: 16 },
  'spec.rollout.rollbackAlarms': { maxItems: 5 },
  'spec.pool.rollingUpdate.instanceRefresh.alarms': { maxItems: 10 },
  // Above the limit, so that the rule on it (cel-pool-rules.ts) gives validate's message.
  'spec.pools': { maxItems: 32 },
  'spec.pools[].instanceTypes': { maxItems: 64 },
  'spec.pools[].subnetIds': { maxItems: 32 },
  'spec.pools[].labels': { maxProperties: 64 },
  'spec.pools[].taints': { maxItems: 50 },
  'spec.pools[].rollingUpdate.instanceRefresh.alarms': { maxItems: 10 },
  'spec.listeners[].pools': { maxItems: 32 },
  'spec.securityGroupRules[].pools': { maxItems: 32 },
};

const DENIED = NODE_SERVICE_PORTS.flatMap((s) => Array.from({ length: s.to - s.from + 1 }, (_, i) => s.from + i));
const DENIED_LIST = `[${DENIED.join(', ')}]`;
const SERVICE_OF = `{${NODE_SERVICE_PORTS.flatMap((s) => Array.from({ length: s.to - s.from + 1 }, (_, i) => `${s.from + i}: ${quoted(s.what)}`)).join(', ')}}`;

function nodeService(at: string, port: string, guard: string, fieldPath: string, what: string): PlacedValidation {
  return v(
    at,
    `${guard}!(${port} in ${DENIED_LIST})`,
    {
      expr: fmt(
        `%d is the port of %s on the nodes; a ${what} never points at a node service, not even with hostPort: true`,
        port,
        `${SERVICE_OF}[${port}]`,
      ),
    },
    fieldPath,
  );
}

/** A listener's node port (or health-check port) outside spec.nodePortRange without hostPort; node services are another rule's. */
function inRange(port: (l: string) => string, has: (l: string) => string, suffix: string): PlacedValidation {
  const from = `(has(self.nodePortRange) ? self.nodePortRange.from : ${DEFAULT_NODE_PORT_RANGE.from})`;
  const to = `(has(self.nodePortRange) ? self.nodePortRange.to : ${DEFAULT_NODE_PORT_RANGE.to})`;
  // Not a port at all, or a node service: other rules say so.
  const ok = (l: string) =>
    `!(${has(l)}) || (has(${l}.hostPort) && ${l}.hostPort) || ${port(l)} < 1 || ${port(l)} > 65535 || ${port(l)} in ${DENIED_LIST} || (${port(l)} >= ${from} && ${port(l)} <= ${to})`;
  const first = `self.listeners.filter(l, !(${ok('l')}))[0]`;
  // The rule reads the range once and each listener's port once (`bind`): every field read costs a copy of its
  // object's schema properties in the API server, and spec has many. The message (on failure only) reads them again.
  const okIn = (l: string) =>
    `!(${has(l)}) || (has(${l}.hostPort) && ${l}.hostPort) || ${bind('p', port(l), `p < 1 || p > 65535 || p in ${DENIED_LIST} || (p >= r[0] && p <= r[1])`)}`;
  return v(
    'spec',
    `!has(self.listeners) || ${bind('r', `[${from}, ${to}]`, `r[0] > r[1] || self.listeners.all(l, ${okIn('l')})`)}`,
    {
      expr: fmt(
        `spec.listeners[%d]${suffix} %d is outside spec.nodePortRange (%d-%d); use a NodePort of a Service, or set hostPort: true on the listener if a hostNetwork pod listens on it`,
        `self.listeners.indexOf(${first})`,
        port(first),
        from,
        to,
      ),
    },
    '.listeners',
  );
}

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
const CIDRS = 'size(self.loadBalancer.allowedCidrs)';
const TRANSPORTS = `(size(self.listeners) + size(self.listeners.filter(l, has(l.protocol) && l.protocol == 'TCP_UDP')))`;
/** A listener's (or health check's) protocol: the CRD has no defaults (the reconciler applies zod's), so TCP when unset. */
const PROTO = `(has(self.protocol) ? self.protocol : 'TCP')`;

/** An ARN's region, account and partition against the cluster's (lib/model/cluster/references.ts). */
const ARN = `'^arn:[a-z-]+:[a-z0-9-]+:[a-z0-9-]*:[0-9]{12}:'`;
const REGION_OK = `self.region.matches('^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$')`;
const PARTITION = `(self.region.startsWith('cn-') ? 'aws-cn' : self.region.startsWith('us-gov-') ? 'aws-us-gov' : self.region.matches('^[a-z]{2}-iso-') ? 'aws-iso' : self.region.matches('^[a-z]{2}-iso[a-z]-') ? 'aws-iso-' + self.region.substring(6, 7) : 'aws')`;
function arnRules(arn: string, what: string, fieldPath: string): PlacedValidation[] {
  // The value is optional (an EKS object has no bootstrap secret): a rule that read it absent would fail to evaluate.
  const guard = `!has(${arn}) || !${REGION_OK} || !self.account.matches('^[0-9]{12}$') || !${arn}.matches(${ARN}) || `;
  return [
    v(
      'spec',
      `${guard}${arn}.split(':')[3] == self.region`,
      {
        expr: `${quoted(`${what} is in region `)} + ${arn}.split(':')[3] + ', the cluster in ' + self.region + ${quoted(` (use ${what} of `)} + self.region + ')'`,
      },
      fieldPath,
    ),
    v(
      'spec',
      `${guard}${arn}.split(':')[4] == self.account`,
      {
        expr: `${quoted(`${what} is in account `)} + ${arn}.split(':')[4] + ', the cluster in ' + self.account + ${quoted(` (use ${what} of account `)} + self.account + ')'`,
      },
      fieldPath,
    ),
    v(
      'spec',
      `${guard}${arn}.split(':')[1] == ${PARTITION}`,
      {
        expr: `${quoted(`${what} is in partition `)} + ${arn}.split(':')[1] + ', but region ' + self.region + ' is in ' + ${PARTITION}`,
      },
      fieldPath,
    ),
  ];
}

/**
 * rollout-rules.ts rollbackAlarmProblems: each rollback alarm in the cluster's region, account and partition. A rule
 * over the list (at most 5 alarms) names the first bad item in its message, as the other list rules do.
 */
function alarmRules(): PlacedValidation[] {
  const list = 'self.rollout.rollbackAlarms';
  const shaped = `a.matches('^arn:[a-z-]+:cloudwatch:[a-z0-9-]+:[0-9]{12}:alarm:')`;
  const guard = `!${REGION_OK} || !self.account.matches('^[0-9]{12}$') || !has(self.rollout) || !has(${list}) || `;
  const rule = (part: number, expected: string, text: string, ...args: string[]) => {
    const bad = `${list}.filter(a, ${shaped} && a.split(':')[${part}] != ${expected})[0]`;
    return v(
      'spec',
      `${guard}${list}.all(a, !${shaped} || a.split(':')[${part}] == ${expected})`,
      {
        expr: fmt(
          `spec.rollout.rollbackAlarms[%d] ${text}`,
          `${list}.indexOf(${bad})`,
          `${bad}.split(':')[${part}]`,
          ...args,
        ),
      },
      '.rollout.rollbackAlarms',
    );
  };
  return [
    rule(
      3,
      'self.region',
      "alarm is in region %s, not the cluster's %s (CloudFormation reads rollback alarms in the stack's region)",
      'self.region',
    ),
    rule(4, 'self.account', "alarm is in account %s, not the cluster's %s", 'self.account'),
    rule(1, PARTITION, 'alarm is in partition %s, but region %s is in %s', 'self.region', PARTITION),
  ];
}

/** references.ts clusterSecretPrefix: the secret's name starts with worker-stacks/<metadata.name>/. */
function secretScope(): PlacedValidation {
  const arn = 'self.spec.cloudConfig.values.bootstrapTokenSecretArn';
  const name = `${arn}.substring(${arn}.indexOf(':secret:') + 8)`;
  const prefix = `'worker-stacks/' + self.metadata.name + '/'`;
  return v(
    '',
    `!has(${arn}) || !${arn}.matches('^arn:[a-z-]+:secretsmanager:[a-z0-9-]*:[0-9]{12}:secret:.') || (${name}.startsWith(${prefix}) && size(${name}) > size(${prefix}))`,
    {
      expr: `'the secret "' + ${name} + '" is not one of this cluster\\'s: its name must start with ' + ${prefix} + ' (the nodes of cluster ' + self.metadata.name + ' may read only those; create the secret under that name)'`,
    },
    '.spec.cloudConfig.values.bootstrapTokenSecretArn',
  );
}

/** cross-field.ts architectureOf: the instance types of the pool (those the rule knows) are of one architecture. */
function archRule(): PlacedValidation {
  const known = (t: string) => `(!${t}.startsWith('mac') && ${t}.matches(${quoted(INSTANCE_FAMILY.source)}))`;
  const arm = (t: string) => `${t}.matches(${quoted(ARM64_FAMILY.source)})`;
  const first = `self.filter(t, ${known('t')})[0]`;
  const other = `self.filter(t, ${known('t')} && ${arm('t')} != ${arm(first)})[0]`;
  const archOf = (t: string) => `(${arm(t)} ? 'arm64' : 'x86_64')`;
  return v(
    'spec.pool.instanceTypes',
    `!self.exists(t, ${known('t')}) || self.all(t, !${known('t')} || ${arm('t')} == ${arm(first)})`,
    {
      expr: fmt(
        'spec.pool.instanceTypes[%d] %s is %s, %s is %s: one machine image boots one architecture (give instance types of one architecture; another architecture needs its own pool and AMI)',
        `self.indexOf(${other})`,
        other,
        archOf(other),
        first,
        archOf(first),
      ),
    },
  );
}

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

export const CROSS_FIELD_RULES: readonly PlacedValidation[] = [
  // metadata.name becomes part of the stack name: a DNS label of at most 40 characters (rules.ts dnsLabel).
  v(
    '',
    `self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 40`,
    {
      expr: `'"' + self.metadata.name + ${quoted(`" is not a DNS label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 40 characters)`)}`,
    },
    '.metadata.name',
  ),

  // cross-field.ts poolProblems
  named(
    'pool-size-order',
    v(
      'spec.pool',
      'self.minSize <= self.maxSize',
      { expr: fmt('%d is greater than maxSize %d', 'self.minSize', 'self.maxSize') },
      '.minSize',
    ),
  ),
  named(
    'pool-size-order',
    v(
      'spec.pool',
      '!has(self.desiredCapacity) || (self.desiredCapacity >= self.minSize && self.desiredCapacity <= self.maxSize)',
      { expr: fmt('%d is outside minSize..maxSize (%d..%d)', 'self.desiredCapacity', 'self.minSize', 'self.maxSize') },
      '.desiredCapacity',
    ),
  ),
  named(
    'min-in-service-below-max',
    v(
      'spec.pool',
      '!has(self.rollingUpdate) || !has(self.rollingUpdate.minInstancesInService) || self.rollingUpdate.minInstancesInService < self.maxSize',
      {
        expr: fmt(
          '%d must be less than maxSize %d, or no instance could ever be replaced',
          'self.rollingUpdate.minInstancesInService',
          'self.maxSize',
        ),
      },
      '.rollingUpdate.minInstancesInService',
    ),
  ),
  named(
    'launch-configuration-one-type',
    v(
      'spec.pool',
      '!has(self.legacyLaunchConfiguration) || !self.legacyLaunchConfiguration || size(self.instanceTypes) <= 1',
      { text: 'a launch configuration takes exactly one instance type (mixed instances need a launch template)' },
      '.instanceTypes',
    ),
  ),
  named(
    'instance-types-limit',
    v('spec.pool.instanceTypes', `size(self) <= ${LIMITS.instanceTypesPerGroup}`, {
      expr: fmt(`%d instance types exceed the AWS limit of ${LIMITS.instanceTypesPerGroup} per group`, 'size(self)'),
    }),
  ),
  named(
    'instance-types-unique',
    unique('spec.pool.instanceTypes', 'scalar', indexed('spec.pool.instanceTypes'), 'instance types must be unique'),
  ),
  named('one-architecture', archRule()),

  // pool-rules.ts: each of spec.pools as spec.pool above, and the rules of named pools and listener pools
  ...POOL_RULES,

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

  // cross-field.ts listenerProblems
  named(
    'listeners-need-load-balancer',
    v(
      'spec',
      '!has(self.listeners) || size(self.listeners) == 0 || has(self.loadBalancer)',
      { text: 'required field is missing (listeners need a load balancer with allowedCidrs)' },
      '.loadBalancer',
      'FieldValueRequired',
    ),
  ),
  // The two limits are one rule at their smaller bound: x-kubernetes-validations is a list map keyed by the rule's
  // text, and server-side apply refuses two entries of one text (lib/platform/kube/crd.ts withRule).
  named(
    'listeners-limit',
    v(
      'spec.listeners',
      `size(self) <= ${Math.min(LIMITS.listenersPerLoadBalancer, LIMITS.targetGroupsPerAutoScalingGroup)}`,
      {
        expr: fmt(
          `%d listeners exceed the AWS limit of ${LIMITS.listenersPerLoadBalancer} per load balancer; %d target groups exceed the AWS limit of ${LIMITS.targetGroupsPerAutoScalingGroup} per Auto Scaling group`,
          'size(self)',
          'size(self)',
        ),
      },
    ),
  ),
  named(
    'client-rules-limit',
    v(
      'spec',
      `!has(self.loadBalancer) || !has(self.listeners) || ${TRANSPORTS} * size(self.loadBalancer.allowedCidrs) <= ${LIMITS.inboundRulesPerSecurityGroup}`,
      {
        expr: `${TRANSPORTS} == size(self.listeners) ? ${fmt(`%d listeners × %d CIDRs = %d rules, over the AWS limit of ${LIMITS.inboundRulesPerSecurityGroup} per security group`, 'size(self.listeners)', CIDRS, `${TRANSPORTS} * ${CIDRS}`)} : ${fmt(`%d listeners (%d with each TCP_UDP listener counted twice) × %d CIDRs = %d rules, over the AWS limit of ${LIMITS.inboundRulesPerSecurityGroup} per security group`, 'size(self.listeners)', TRANSPORTS, CIDRS, `${TRANSPORTS} * ${CIDRS}`)}`,
      },
      '.loadBalancer.allowedCidrs',
    ),
  ),
  named(
    'tls-fields',
    v(
      'spec.listeners[]',
      `${PROTO} != 'TLS' || has(self.certificateArn)`,
      { text: 'required field is missing (TLS listeners need an ACM certificate)' },
      '.certificateArn',
      'FieldValueRequired',
    ),
  ),
  named(
    'tls-fields',
    v(
      'spec.listeners[]',
      `${PROTO} == 'TLS' || !has(self.certificateArn)`,
      { expr: `'only TLS listeners take a certificate (protocol is ' + ${PROTO} + ')'` },
      '.certificateArn',
      'FieldValueForbidden',
    ),
  ),
  named(
    'tcp-health-check-path',
    v(
      'spec.listeners[].healthCheck',
      `${PROTO} != 'TCP' || !has(self.path)`,
      { text: 'a TCP health check takes no path (use protocol HTTP or HTTPS)' },
      '.path',
      'FieldValueForbidden',
    ),
  ),
  named(
    'listeners-unique',
    unique('spec.listeners', (a) => `${a}.name`, indexed('spec.listeners', '.name'), 'listener names must be unique'),
  ),
  named(
    'listeners-unique',
    unique('spec.listeners', (a) => `${a}.port`, indexed('spec.listeners', '.port'), 'listener ports must be unique'),
  ),

  // node-ports.ts
  named(
    'node-port-range-order',
    v(
      'spec.nodePortRange',
      'self.from <= self.to',
      { expr: fmt('%d is greater than to (%d)', 'self.from', 'self.to') },
      '.from',
    ),
  ),
  named(
    'node-port-range-unprivileged',
    v(
      'spec.nodePortRange',
      `self.from > self.to || self.from >= ${MIN_NODE_PORT}`,
      {
        expr: fmt(
          `%d is below ${MIN_NODE_PORT}: the NodePort range holds only Kubernetes Service ports, never the privileged ports of host daemons (listeners that need one set hostPort: true)`,
          'self.from',
        ),
      },
      '.from',
    ),
  ),
  named(
    'node-port-range-no-service',
    v(
      'spec.nodePortRange',
      `self.from > self.to || self.from < ${MIN_NODE_PORT} || !${DENIED_LIST}.exists(p, p >= self.from && p <= self.to)`,
      {
        expr: fmt(
          '%d-%d holds %d, the port of %s on the nodes; the NodePort range holds only Kubernetes Service ports (the default is 30000-32767)',
          'self.from',
          'self.to',
          `${DENIED_LIST}.filter(p, p >= self.from && p <= self.to)[0]`,
          `${SERVICE_OF}[${DENIED_LIST}.filter(p, p >= self.from && p <= self.to)[0]]`,
        ),
      },
    ),
  ),
  named('no-node-service-port', nodeService('spec.listeners[]', 'self.nodePort', '', '.nodePort', 'listener')),
  named(
    'no-node-service-port',
    nodeService(
      'spec.listeners[]',
      'self.healthCheck.port',
      '!has(self.healthCheck) || !has(self.healthCheck.port) || ',
      '.healthCheck.port',
      'health check',
    ),
  ),
  named(
    'node-port-in-range',
    inRange(
      (l) => `${l}.nodePort`,
      () => 'true',
      '.nodePort',
    ),
  ),
  named(
    'node-port-in-range',
    inRange(
      (l) => `${l}.healthCheck.port`,
      (l) => `has(${l}.healthCheck) && has(${l}.healthCheck.port)`,
      '.healthCheck.port',
    ),
  ),
  named(
    'tls-fields',
    v(
      'spec.listeners[]',
      `${PROTO} == 'TLS' || !has(self.sslPolicy)`,
      { expr: `'only TLS listeners take an sslPolicy (protocol is ' + ${PROTO} + ')'` },
      '.sslPolicy',
      'FieldValueForbidden',
    ),
  ),
  named(
    'udp-health-check',
    v(
      'spec.listeners[]',
      `${PROTO} != 'UDP' || (has(self.healthCheck) && has(self.healthCheck.port))`,
      {
        text: 'a UDP listener needs an explicit health check with a port (healthCheck: {protocol: TCP, HTTP or HTTPS, port: <a TCP port the same pods answer>}); a TCP probe of a UDP node port never passes',
      },
      '.healthCheck',
      'FieldValueRequired',
    ),
  ),
  named(
    'subnets-unique',
    unique(
      'spec.loadBalancer.subnetIds',
      'scalar',
      indexed('spec.loadBalancer.subnetIds'),
      'a load balancer takes each subnet once, one per zone',
    ),
  ),

  // references.ts
  ...arnRules(
    'self.cloudConfig.values.bootstrapTokenSecretArn',
    'the secret',
    '.cloudConfig.values.bootstrapTokenSecretArn',
  ).map((r) => named('reference-in-cluster', r)),
  named('secret-scope', secretScope()),
  // template-values.ts: the typed values a template requires (kubernetesVersion, bootstrapTokenSecretArn).
  ...templateRequiredRules(),
  ...alarmRules().map((r) => named('reference-in-cluster', r)),
  // A listener certificate's region and account: one rule over the list would have to format the ARN's parts of the
  // first bad listener, which the cost estimator cannot bound; the reconciler reports it (docs/kubernetes.md).

  // cross-field.ts taintProblems, tagProblems
  named(
    'taints-unique',
    unique(
      'spec.cloudConfig.values.nodeTaints',
      (a) => `${a}.key + '|' + ${a}.effect`,
      indexed('spec.cloudConfig.values.nodeTaints'),
      'taints (same key and effect; the kubelet refuses them) must be unique',
    ),
  ),
  named(
    'tags-limit',
    v('spec.tags', `size(self) <= ${LIMITS.userTagsPerStack}`, {
      expr: fmt(
        `%d tags, at most ${LIMITS.userTagsPerStack} allowed (AWS takes 50 per resource, and worker-stacks adds its own)`,
        'size(self)',
      ),
    }),
  ),
];
