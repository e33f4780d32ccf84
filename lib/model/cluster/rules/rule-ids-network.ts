import { CelTwin, ClusterRule } from './cluster-rule';

// The named rules of the network, the security-group rules, the listeners and their node ports, taints and tags
// (cross-field.ts, listener-problems.ts, node-ports.ts, exposure.ts; the CRD: lib/platform/kube/cel-network-rules.ts,
// cel-listener-rules.ts, cel-rules.ts).

const CRD: CelTwin = 'crd';

export const NETWORK_RULES = [
  {
    id: 'subnet-per-zone',
    paths: ['spec.network.subnetIds'],
    says: 'One subnet per availability zone, in the same order.',
    cel: CRD,
  },
  {
    id: 'zone-in-region',
    paths: ['spec.network.availabilityZones[]'],
    says: "Every availability zone is in the cluster's region.",
    cel: CRD,
  },
  {
    id: 'zones-unique',
    paths: ['spec.network.availabilityZones[]'],
    says: 'Each availability zone once.',
    cel: CRD,
  },
  {
    id: 'subnets-unique',
    paths: ['spec.network.subnetIds[]', 'spec.pools[].subnetIds[]', 'spec.loadBalancer.subnetIds[]'],
    says: 'Each subnet once in a list (a load balancer takes one per zone).',
    cel: CRD,
  },
  {
    id: 'sg-rule-ports',
    paths: ['spec.securityGroupRules[]', 'spec.securityGroupRules[].port'],
    says: 'A tcp or udp rule gives a port or a fromPort+toPort range (not both, not half a range); icmp, icmpv6 and all take no port.',
    cel: CRD,
  },
  {
    id: 'port-range-order',
    paths: ['spec.securityGroupRules[].fromPort'],
    says: "A rule's fromPort is at most its toPort.",
    cel: CRD,
  },
  {
    id: 'sg-rule-one-source',
    paths: ['spec.securityGroupRules[].source'],
    says: 'A rule has exactly one source: cidr, cidrIpv6, securityGroupId, prefixListId, self or loadBalancer.',
    cel: CRD,
  },
  {
    id: 'load-balancer-source',
    paths: ['spec.securityGroupRules[].source.loadBalancer'],
    says: 'A rule from the load balancer needs listeners (without them there is no load balancer).',
    cel: CRD,
  },
  {
    id: 'icmpv6-source',
    paths: ['spec.securityGroupRules[].protocol'],
    says: 'An icmpv6 rule has no IPv4 source cidr (it would never match).',
    cel: CRD,
  },
  {
    id: 'sg-rules-unique',
    paths: ['spec.securityGroupRules[]'],
    says: 'No two rules with the same protocol, ports and source (port 22 and 22-22 are one rule to AWS, and so are two spellings of one IPv6 CIDR).',
    cel: CRD,
  },
  {
    id: 'sg-rules-limit',
    paths: ['spec.securityGroupRules'],
    says: "The rules and the listeners' node-port rules fit AWS's inbound rules per security group.",
    cel: CRD,
  },
  {
    id: 'no-public-node-service',
    paths: ['spec.securityGroupRules[].source.cidr', 'spec.securityGroupRules[].source.cidrIpv6'],
    says: 'A rule that opens a node-service port (SSH, the kubelet, etcd ...) or protocol all has no public address in its source CIDR.',
    cel: CRD,
  },
  {
    id: 'listeners-need-load-balancer',
    paths: ['spec.loadBalancer'],
    says: 'Listeners need spec.loadBalancer (with its allowedCidrs).',
    cel: CRD,
  },
  {
    id: 'listeners-limit',
    paths: ['spec.listeners'],
    says: "At most AWS's listeners per load balancer and target groups per Auto Scaling group.",
    cel: CRD,
  },
  {
    id: 'client-rules-limit',
    paths: ['spec.loadBalancer.allowedCidrs'],
    says: "Listeners (TCP_UDP counted twice) × allowed CIDRs fit AWS's rules per security group.",
    cel: CRD,
  },
  {
    id: 'tls-fields',
    paths: ['spec.listeners[].certificateArn', 'spec.listeners[].sslPolicy'],
    says: 'A TLS listener has a certificateArn; only TLS listeners take a certificateArn or an sslPolicy.',
    cel: CRD,
  },
  {
    id: 'tcp-health-check-path',
    paths: ['spec.listeners[].healthCheck.path'],
    says: 'A TCP health check takes no path.',
    cel: CRD,
  },
  {
    id: 'udp-health-check',
    paths: ['spec.listeners[].healthCheck'],
    says: 'A UDP listener has a health check with an explicit port (nothing answers TCP on a UDP node port).',
    cel: CRD,
  },
  {
    id: 'listeners-unique',
    paths: ['spec.listeners[].name', 'spec.listeners[].port'],
    says: 'Listener names and ports are unique.',
    cel: CRD,
  },
  {
    id: 'node-port-range-order',
    paths: ['spec.nodePortRange.from'],
    says: 'spec.nodePortRange.from is at most to.',
    cel: CRD,
  },
  {
    id: 'node-port-range-unprivileged',
    paths: ['spec.nodePortRange.from'],
    says: 'The NodePort range starts at 1024 or above: it never holds the privileged ports of host daemons.',
    cel: CRD,
  },
  {
    id: 'node-port-range-no-service',
    paths: ['spec.nodePortRange'],
    says: 'The NodePort range holds no port of a node service.',
    cel: CRD,
  },
  {
    id: 'no-node-service-port',
    paths: ['spec.listeners[].nodePort', 'spec.listeners[].healthCheck.port'],
    says: 'A listener or its health check never points at a node service (SSH, the kubelet ...), not even with hostPort: true.',
    cel: CRD,
  },
  {
    id: 'node-port-in-range',
    paths: ['spec.listeners[].nodePort', 'spec.listeners[].healthCheck.port'],
    says: 'A node port (and health-check port) is in spec.nodePortRange, unless the listener sets hostPort: true.',
    cel: CRD,
  },
  {
    id: 'taints-unique',
    paths: ['spec.cloudConfig.values.nodeTaints[]', 'spec.pools[].taints[]'],
    says: "No two taints with the same key and effect on one node: the cluster's and a pool's together (the kubelet refuses them).",
    cel: CRD,
  },
  {
    id: 'tags-limit',
    paths: ['spec.tags'],
    says: 'At most 45 tags: AWS takes 50 per resource, and worker-stacks adds its own.',
    cel: CRD,
  },
] as const satisfies readonly ClusterRule[];
