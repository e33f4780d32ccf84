import { Found, int, Loose, obj, str } from '../rules/loose';
import { found } from '../rules/rule-registry';
/**
 * What a listener may forward to on the nodes. A listener puts a node port behind a load balancer, possibly an
 * internet-facing one open to 0.0.0.0/0, so a typo such as `nodePort: 22` or `10250` would publish SSH or the
 * kubelet API. Node ports must lie in the cluster's NodePort range (where only Kubernetes Services listen)
 * unless a listener opts in with `hostPort: true` (hostNetwork ingress); ports of node services are refused
 * even then, and health-check ports follow the same rules (the load balancer's group is let in on them).
 */

/** Node services a listener never forwards to, on any protocol (docs/reference.md, "Rules beyond the types", lists them). */
export const NODE_SERVICE_PORTS: ReadonlyArray<{ readonly from: number; readonly to: number; readonly what: string }> =
  [
    { from: 22, to: 22, what: 'SSH' },
    { from: 179, to: 179, what: 'BGP (Calico and other routed pod networks)' },
    { from: 2379, to: 2380, what: 'etcd' },
    { from: 4789, to: 4789, what: 'VXLAN (pod network overlay)' },
    { from: 6443, to: 6443, what: 'the Kubernetes API server' },
    { from: 8472, to: 8472, what: 'flannel VXLAN (pod network overlay)' },
    { from: 9100, to: 9100, what: 'node-exporter metrics' },
    { from: 10248, to: 10248, what: 'the kubelet health endpoint' },
    { from: 10249, to: 10249, what: 'kube-proxy metrics' },
    { from: 10250, to: 10250, what: 'the kubelet API' },
    { from: 10255, to: 10255, what: 'the kubelet read-only API' },
    { from: 10256, to: 10256, what: 'kube-proxy health' },
    { from: 10257, to: 10257, what: 'kube-controller-manager' },
    { from: 10259, to: 10259, what: 'kube-scheduler' },
    { from: 51820, to: 51821, what: 'WireGuard (encrypted pod network)' },
  ];

export const DEFAULT_NODE_PORT_RANGE = { from: 30000, to: 32767 } as const;
/** The lowest first port of spec.nodePortRange: below it are the privileged ports of host daemons. */
export const MIN_NODE_PORT = 1024;

export function nodeService(port: number): string | undefined {
  return NODE_SERVICE_PORTS.find((s) => port >= s.from && port <= s.to)?.what;
}

function portProblem(
  at: string,
  port: number | undefined,
  range: { from: number; to: number },
  hostPort: boolean,
  what: string,
): Found[] {
  if (port === undefined || port < 1 || port > 65535) return []; // not a port: the schema says so
  const service = nodeService(port);
  if (service)
    return [
      found(
        'no-node-service-port',
        at,
        `${port} is the port of ${service} on the nodes; a ${what} never points at a node service, not even with hostPort: true`,
      ),
    ];
  if (!hostPort && (port < range.from || port > range.to)) {
    return [
      found(
        'node-port-in-range',
        at,
        `${port} is outside spec.nodePortRange (${range.from}-${range.to}); use a NodePort of a Service, or set hostPort: true on the listener if a hostNetwork pod listens on it`,
      ),
    ];
  }
  return [];
}

export function nodePortProblems(spec: Loose): Found[] {
  const out: Found[] = [];
  const rangeRaw = obj(spec.nodePortRange);
  const from = int(rangeRaw.from) ?? (spec.nodePortRange === undefined ? DEFAULT_NODE_PORT_RANGE.from : undefined);
  const to = int(rangeRaw.to) ?? (spec.nodePortRange === undefined ? DEFAULT_NODE_PORT_RANGE.to : undefined);
  if (from !== undefined && to !== undefined && from > to)
    out.push(found('node-port-range-order', 'spec.nodePortRange.from', `${from} is greater than to (${to})`));
  // The range is where only Kubernetes Services listen; a listener forwards into it without hostPort. A range over
  // privileged ports or node services (1-65535, say) would make that opt-in meaningless.
  if (from !== undefined && to !== undefined && from <= to) {
    const service = NODE_SERVICE_PORTS.find((s) => s.from <= to && s.to >= from);
    if (from < MIN_NODE_PORT)
      out.push(
        found(
          'node-port-range-unprivileged',
          'spec.nodePortRange.from',
          `${from} is below ${MIN_NODE_PORT}: the NodePort range holds only Kubernetes Service ports, never the privileged ports of host daemons (listeners that need one set hostPort: true)`,
        ),
      );
    else if (service)
      out.push(
        found(
          'node-port-range-no-service',
          'spec.nodePortRange',
          `${from}-${to} holds ${service.from === service.to ? service.from : `${service.from}-${service.to}`}, the port of ${service.what} on the nodes; the NodePort range holds only Kubernetes Service ports (the default is 30000-32767)`,
        ),
      );
  }
  const range = from !== undefined && to !== undefined && from <= to ? { from, to } : undefined;

  const listeners = Array.isArray(spec.listeners) ? spec.listeners : [];
  listeners.forEach((raw, i) => {
    const l = obj(raw);
    const at = `spec.listeners[${i}]`;
    const hostPort = l.hostPort === true;
    const proto = str(l.protocol) ?? 'TCP';
    const hc = obj(l.healthCheck);
    if (range) {
      out.push(...portProblem(`${at}.nodePort`, int(l.nodePort), range, hostPort, 'listener'));
      out.push(...portProblem(`${at}.healthCheck.port`, int(hc.port), range, hostPort, 'health check'));
    }
    if (l.sslPolicy !== undefined && proto !== 'TLS')
      out.push(found('tls-fields', `${at}.sslPolicy`, `only TLS listeners take an sslPolicy (protocol is ${proto})`));
    // Nothing answers TCP on a UDP-only node port, so the default probe (TCP on the node port) would fail on every
    // node, and with ELB health checks the group would replace healthy nodes forever. TCP_UDP keeps the default:
    // its Service listens on TCP on the same port.
    if (proto === 'UDP' && hc.port === undefined) {
      out.push(
        found(
          'udp-health-check',
          l.healthCheck === undefined ? `${at}.healthCheck` : `${at}.healthCheck.port`,
          'a UDP listener needs an explicit health check with a port (healthCheck: {protocol: TCP, HTTP or HTTPS, port: <a TCP port the same pods answer>}); a TCP probe of a UDP node port never passes',
        ),
      );
    }
  });
  return out;
}

/** The load balancer's own subnets: distinct (AWS takes one subnet per zone; the zones are not known without a lookup). */
export function loadBalancerSubnetProblems(spec: Loose): Found[] {
  const subnets = obj(spec.loadBalancer).subnetIds;
  if (!Array.isArray(subnets)) return [];
  const first = new Map<unknown, number>();
  const out: Found[] = [];
  subnets.forEach((s, i) => {
    const j = first.get(s);
    if (j === undefined) first.set(s, i);
    else
      out.push(
        found(
          'subnets-unique',
          `spec.loadBalancer.subnetIds[${i}]`,
          `duplicates spec.loadBalancer.subnetIds[${j}] (a load balancer takes each subnet once, one per zone)`,
        ),
      );
  });
  return out;
}
