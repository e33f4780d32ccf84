import { exposureProblems } from './exposure';
import { LIMITS } from './limits';
import { clientRuleCount, ListenerPorts, nodeRules } from './listener-rules';
import { loadBalancerSubnetProblems, nodePortProblems } from './node-ports';
import { referenceProblems } from './references';
import { rolloutProblems } from './rollout-rules';
import { RULE_SOURCE_KINDS } from './schema';

/**
 * Rules that span several fields. They read the raw object defensively so
 * that they still report while other fields have type errors: every problem
 * is returned in one round.
 */

type Loose = Record<string, unknown>;
type Found = { path: string; message: string };

const obj = (v: unknown): Loose => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Loose) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function duplicates(items: unknown[], key: (x: Loose) => unknown, at: (i: number) => string, what: string): Found[] {
  const first = new Map<string, number>();
  const out: Found[] = [];
  items.forEach((raw, i) => {
    const k = key(obj(raw));
    if (k === undefined) return;
    const id = JSON.stringify(k);
    const j = first.get(id);
    if (j === undefined) first.set(id, i);
    else out.push({ path: at(i), message: `duplicates ${at(j)} (${what} must be unique)` });
  });
  return out;
}

export function crossFieldProblems(raw: unknown, templates: ReadonlySet<string>): Found[] {
  const spec = obj(obj(raw).spec);
  return [
    ...poolProblems(spec),
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

function poolProblems(spec: Loose): Found[] {
  const out: Found[] = [];
  if (Object.keys(spec).length > 0 && (spec.pool === undefined) === (spec.pools === undefined))
    out.push({
      path: 'spec.pool',
      message:
        spec.pool === undefined
          ? 'give spec.pool (one pool) or spec.pools (named pools)'
          : 'give spec.pool or spec.pools, not both (spec.pool is the pool named default: move it into spec.pools with name: default)',
    });
  const pool = obj(spec.pool);
  const min = int(pool.minSize);
  const max = int(pool.maxSize);
  const desired = int(pool.desiredCapacity);
  if (min !== undefined && max !== undefined && min > max)
    out.push({ path: 'spec.pool.minSize', message: `${min} is greater than maxSize ${max}` });
  if (desired !== undefined && ((min !== undefined && desired < min) || (max !== undefined && desired > max))) {
    out.push({ path: 'spec.pool.desiredCapacity', message: `${desired} is outside minSize..maxSize (${min}..${max})` });
  }
  const minInService = int(obj(pool.rollingUpdate).minInstancesInService);
  if (minInService !== undefined && max !== undefined && minInService >= max) {
    out.push({
      path: 'spec.pool.rollingUpdate.minInstancesInService',
      message: `${minInService} must be less than maxSize ${max}, or no instance could ever be replaced`,
    });
  }
  const types = arr(pool.instanceTypes);
  if (types.length > LIMITS.instanceTypesPerGroup) {
    out.push({
      path: 'spec.pool.instanceTypes',
      message: `${types.length} instance types exceed the AWS limit of ${LIMITS.instanceTypesPerGroup} per group`,
    });
  }
  if (pool.legacyLaunchConfiguration === true && types.length > 1) {
    out.push({
      path: 'spec.pool.instanceTypes',
      message: 'a launch configuration takes exactly one instance type (mixed instances need a launch template)',
    });
  }
  out.push(
    ...duplicates(
      types.map((t) => ({ t })),
      (x) => str(x.t),
      (i) => `spec.pool.instanceTypes[${i}]`,
      'instance types',
    ),
  );
  // One AMI serves every type of the group: an arm64 image does not boot on x86_64 and the other way round.
  const archs = types.map((t) => (typeof t === 'string' ? architectureOf(t) : undefined));
  const first = archs.findIndex((a) => a !== undefined);
  const other = archs.findIndex((a) => a !== undefined && a !== archs[first]);
  if (first >= 0 && other >= 0) {
    out.push({
      path: `spec.pool.instanceTypes[${other}]`,
      message: `${String(types[other])} is ${archs[other]}, ${String(types[first])} is ${archs[first]}: one machine image boots one architecture (give instance types of one architecture; another architecture needs its own pool and AMI)`,
    });
  }
  return out;
}

/**
 * The CPU architecture of an EC2 instance type, from its name: Graviton families carry a `g` among the attributes
 * after the generation (m6g, c7gn, r8gd, t4g, im4gn, is4gen, x2gd, g5g) and a1 is the first Graviton; every other
 * family is x86_64 (the high-memory u-*, u7i-*, p6-b200 ones included). Checked against every instance type of EC2's
 * DescribeInstanceTypes as the pinned moto ships it (test/model/cluster/instance-architecture.test.ts). undefined
 * for macOS hosts and for a name that is not an instance type (the schema reports it).
 */
export function architectureOf(instanceType: string): 'arm64' | 'x86_64' | undefined {
  // macOS hosts (mac1, mac2-m2 ...) have their own AMIs: out of scope.
  if (instanceType.startsWith('mac') || !INSTANCE_FAMILY.test(instanceType)) return undefined;
  return ARM64_FAMILY.test(instanceType) ? 'arm64' : 'x86_64';
}

/** `<letters><generation><attributes>.`, and the arm64 ones among them; RE2 reads both alike (the CRD's CEL). */
export const INSTANCE_FAMILY = /^[a-z]+[0-9]*[a-z0-9-]*\./;
export const ARM64_FAMILY = /^(a[0-9]+[a-z-]*|[a-z]+[0-9]+[a-z-]*g[a-z-]*)\./;

function networkProblems(spec: Loose): Found[] {
  const out: Found[] = [];
  const net = obj(spec.network);
  const azs = arr(net.availabilityZones);
  const subnets = arr(net.subnetIds);
  if (Array.isArray(net.availabilityZones) && Array.isArray(net.subnetIds) && azs.length !== subnets.length) {
    out.push({
      path: 'spec.network.subnetIds',
      message: `${subnets.length} subnets for ${azs.length} availability zones (give one subnet per zone, in the same order)`,
    });
  }
  const region = str(spec.region);
  azs.forEach((az, i) => {
    if (region && typeof az === 'string' && !az.startsWith(region))
      out.push({ path: `spec.network.availabilityZones[${i}]`, message: `${az} is not in region ${region}` });
  });
  out.push(
    ...duplicates(
      azs.map((a) => ({ a })),
      (x) => str(x.a),
      (i) => `spec.network.availabilityZones[${i}]`,
      'zones',
    ),
  );
  out.push(
    ...duplicates(
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
    if (ported && single && range) out.push({ path: at, message: 'give either port or fromPort+toPort, not both' });
    if (ported && !single && !range)
      out.push({
        path: `${at}.port`,
        message: `required field is missing (${proto} rules need a port or a fromPort+toPort range)`,
      });
    if (ported && range && (r.fromPort === undefined || r.toPort === undefined))
      out.push({ path: at, message: 'a port range needs both fromPort and toPort' });
    const from = int(r.fromPort);
    const to = int(r.toPort);
    if (from !== undefined && to !== undefined && from > to)
      out.push({
        path: `${at}.fromPort`,
        message: `port range is reversed: fromPort ${from} is greater than toPort ${to}`,
      });
    if ((proto === 'icmp' || proto === 'icmpv6' || proto === 'all') && (single || range))
      out.push({ path: at, message: `${proto} rules take no port (remove port/fromPort/toPort)` });
    const src = obj(r.source);
    const kinds = RULE_SOURCE_KINDS.filter((k) => src[k] !== undefined);
    if (r.source !== undefined && kinds.length !== 1) {
      out.push({
        path: `${at}.source`,
        message: `give exactly one of ${RULE_SOURCE_KINDS.join(', ')} (found ${kinds.length ? kinds.join(', ') : 'none'})`,
      });
    }
    if (src.loadBalancer === true && !hasListeners)
      out.push({ path: `${at}.source.loadBalancer`, message: 'the cluster has no listeners, so no load balancer' });
    if (proto === 'icmpv6' && src.cidr !== undefined)
      out.push({
        path: `${at}.protocol`,
        message: 'icmpv6 with an IPv4 source cidr never matches (use icmp, or cidrIpv6)',
      });
  });
  out.push(
    ...duplicates(
      rules,
      // port: 22 and fromPort/toPort 22-22 are one rule to AWS (a duplicate fails at deploy time), so compare the range.
      (r) => [
        r.protocol,
        r.port ?? r.fromPort ?? null,
        r.port ?? r.toPort ?? null,
        RULE_SOURCE_KINDS.map((k) => obj(r.source)[k] ?? null),
      ],
      (i) => `spec.securityGroupRules[${i}]`,
      'rules (same protocol, ports and source)',
    ),
  );
  // Listener node ports add rules (from the load balancer) to the same group, so they count against the same quota.
  const fromListeners = nodeRules(arr(spec.listeners).map((l) => obj(l) as ListenerPorts)).length;
  const total = rules.length + fromListeners;
  if (total > LIMITS.inboundRulesPerSecurityGroup) {
    out.push({
      path: 'spec.securityGroupRules',
      message: `${rules.length} rules + ${fromListeners} listener node-port rules = ${total}, over the AWS limit of ${LIMITS.inboundRulesPerSecurityGroup} inbound rules per security group (use port ranges or prefix lists)`,
    });
  }
  return out;
}

function listenerProblems(spec: Loose): Found[] {
  const out: Found[] = [];
  const listeners = arr(spec.listeners);
  if (listeners.length > 0 && spec.loadBalancer === undefined)
    out.push({
      path: 'spec.loadBalancer',
      message: 'required field is missing (listeners need a load balancer with allowedCidrs)',
    });
  if (listeners.length > LIMITS.listenersPerLoadBalancer) {
    out.push({
      path: 'spec.listeners',
      message: `${listeners.length} listeners exceed the AWS limit of ${LIMITS.listenersPerLoadBalancer} per load balancer`,
    });
  }
  if (listeners.length > LIMITS.targetGroupsPerAutoScalingGroup) {
    out.push({
      path: 'spec.listeners',
      message: `${listeners.length} target groups exceed the AWS limit of ${LIMITS.targetGroupsPerAutoScalingGroup} per Auto Scaling group`,
    });
  }
  const cidrs = arr(obj(spec.loadBalancer).allowedCidrs).length;
  const transports = clientRuleCount(
    listeners.map((l) => obj(l) as ListenerPorts),
    1,
  );
  if (transports * cidrs > LIMITS.inboundRulesPerSecurityGroup) {
    const counted = transports === listeners.length ? '' : ` (${transports} with each TCP_UDP listener counted twice)`;
    out.push({
      path: 'spec.loadBalancer.allowedCidrs',
      message: `${listeners.length} listeners${counted} × ${cidrs} CIDRs = ${transports * cidrs} rules, over the AWS limit of ${LIMITS.inboundRulesPerSecurityGroup} per security group`,
    });
  }
  listeners.forEach((raw, i) => {
    const l = obj(raw);
    const at = `spec.listeners[${i}]`;
    const proto = str(l.protocol) ?? 'TCP';
    if (proto === 'TLS' && l.certificateArn === undefined)
      out.push({
        path: `${at}.certificateArn`,
        message: 'required field is missing (TLS listeners need an ACM certificate)',
      });
    if (proto !== 'TLS' && l.certificateArn !== undefined)
      out.push({
        path: `${at}.certificateArn`,
        message: `only TLS listeners take a certificate (protocol is ${proto})`,
      });
    const hc = obj(l.healthCheck);
    const hcProto = str(hc.protocol) ?? 'TCP';
    if (hc.path !== undefined && hcProto === 'TCP')
      out.push({
        path: `${at}.healthCheck.path`,
        message: 'a TCP health check takes no path (use protocol HTTP or HTTPS)',
      });
  });
  out.push(
    ...duplicates(
      listeners,
      (l) => str(l.name),
      (i) => `spec.listeners[${i}].name`,
      'listener names',
    ),
  );
  out.push(
    ...duplicates(
      listeners,
      (l) => int(l.port),
      (i) => `spec.listeners[${i}].port`,
      'listener ports',
    ),
  );
  return out;
}

function taintProblems(spec: Loose): Found[] {
  const taints = arr(obj(obj(spec.cloudConfig).values).nodeTaints);
  return duplicates(
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
        {
          path: 'spec.tags',
          message: `${n} tags, at most ${LIMITS.userTagsPerStack} allowed (AWS takes 50 per resource, and worker-stacks adds its own)`,
        },
      ]
    : [];
}

function templateProblems(spec: Loose, templates: ReadonlySet<string>): Found[] {
  const name = str(obj(spec.cloudConfig).template);
  if (name === undefined || templates.has(name)) return [];
  return [
    {
      path: 'spec.cloudConfig.template',
      message: `unknown template ${JSON.stringify(name)} (known: ${[...templates].sort().join(', ') || 'none'})`,
    },
  ];
}
