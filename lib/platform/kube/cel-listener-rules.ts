import { fmt, quoted } from '../../model/cluster/schema/openapi';
import { LIMITS } from '../../model/cluster/rules/limits';
import { DEFAULT_NODE_PORT_RANGE, MIN_NODE_PORT, NODE_SERVICE_PORTS } from '../../model/cluster/network/node-ports';
import { bind, indexed, named, PlacedValidation, unique, v } from './cel-build';

// The CEL twins of the listener rules (listener-problems.ts) and node ports (node-ports.ts); the rest of
// the CRD's cross-field rules: cel-rules.ts.
const DENIED = NODE_SERVICE_PORTS.flatMap((s) => Array.from({ length: s.to - s.from + 1 }, (_, i) => s.from + i));
export const DENIED_LIST = `[${DENIED.join(', ')}]`;
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

const CIDRS = 'size(self.loadBalancer.allowedCidrs)';
const TRANSPORTS = `(size(self.listeners) + size(self.listeners.filter(l, has(l.protocol) && l.protocol == 'TCP_UDP')))`;
/** A listener's (or health check's) protocol: the CRD has no defaults (the reconciler applies zod's), so TCP when unset. */
const PROTO = `(has(self.protocol) ? self.protocol : 'TCP')`;

/** The listener and node-port rules, in the CRD's order. */
export const LISTENER_CEL_RULES: readonly PlacedValidation[] = [
  // listener-problems.ts
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
];
