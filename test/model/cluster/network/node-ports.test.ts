import { validateCluster } from '../../../../lib/model/cluster/validate';
import { NODE_SERVICE_PORTS } from '../../../../lib/model/cluster/network/node-ports';
import { BadRow, expectRefused } from '../../../helpers/bad-input';
import { rawExample, TEMPLATES } from '../../../helpers/clusters';
import { Json } from '../../../helpers/json';

/**
 * Listeners never expose node services by accident (issue 10, items 4 and 10): node ports and health-check ports
 * lie in spec.nodePortRange unless the listener sets hostPort, node-service ports are refused even then, and a UDP
 * listener names a health check that can pass.
 */

const CERT = 'arn:aws:acm:eu-west-1:111111111111:certificate/0f0e0d0c-0b0a-0908-0706-050403020100';

const rows: BadRow[] = [
  {
    what: 'nodePort 22 (SSH)',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[0].nodePort = 22),
    path: 'spec.listeners[0].nodePort',
    message:
      /^22 is the port of SSH on the nodes; a listener never points at a node service, not even with hostPort: true$/,
    rule: 'no-node-service-port',
  },
  {
    what: 'nodePort 10250 with hostPort',
    example: 'prod-eu1',
    mutate: (r) => Object.assign(r.spec.listeners[0], { nodePort: 10250, hostPort: true }),
    path: 'spec.listeners[0].nodePort',
    message: /^10250 is the port of the kubelet API on the nodes/,
    rule: 'no-node-service-port',
  },
  {
    what: 'nodePort 2380 (etcd range) with hostPort',
    example: 'prod-eu1',
    mutate: (r) => Object.assign(r.spec.listeners[0], { nodePort: 2380, hostPort: true }),
    path: 'spec.listeners[0].nodePort',
    message: /^2380 is the port of etcd on the nodes/,
    rule: 'no-node-service-port',
  },
  {
    what: 'nodePort 8080 outside the NodePort range',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[1].nodePort = 8080),
    path: 'spec.listeners[1].nodePort',
    message: /^8080 is outside spec\.nodePortRange \(30000-32767\); .*hostPort: true/,
    rule: 'node-port-in-range',
  },
  {
    what: 'nodePort outside a custom range',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.nodePortRange = { from: 31000, to: 31999 }),
    path: 'spec.listeners[0].nodePort',
    message: /^30443 is outside spec\.nodePortRange \(31000-31999\)/,
    alsoAt: ['spec.listeners[1].nodePort', 'spec.listeners[0].healthCheck.port', 'spec.listeners[1].healthCheck.port'],
    rule: 'node-port-in-range',
  },
  {
    what: 'health-check port 10256 (kube-proxy)',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[0].healthCheck.port = 10256),
    path: 'spec.listeners[0].healthCheck.port',
    message: /^10256 is the port of kube-proxy health on the nodes; a health check never points at a node service/,
    rule: 'no-node-service-port',
  },
  {
    what: 'health-check port outside the range',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[0].healthCheck.port = 8081),
    path: 'spec.listeners[0].healthCheck.port',
    message: /^8081 is outside spec\.nodePortRange/,
    rule: 'node-port-in-range',
  },
  {
    what: 'nodePortRange reversed',
    example: 'staging-us1',
    mutate: (r) => (r.spec.nodePortRange = { from: 32767, to: 30000 }),
    path: 'spec.nodePortRange.from',
    message: /^32767 is greater than to \(30000\)$/,
    rule: 'node-port-range-order',
  },
  {
    what: 'UDP listener without a health check',
    example: 'edge-ap1',
    mutate: (r) => delete r.spec.listeners[2].healthCheck,
    path: 'spec.listeners[2].healthCheck',
    message:
      /^a UDP listener needs an explicit health check with a port .*a TCP probe of a UDP node port never passes$/,
    rule: 'udp-health-check',
  },
  {
    what: 'UDP listener with a health check but no port',
    example: 'edge-ap1',
    mutate: (r) => (r.spec.listeners[2].healthCheck = { protocol: 'HTTP', path: '/healthz' }),
    path: 'spec.listeners[2].healthCheck.port',
    message: /^a UDP listener needs an explicit health check with a port/,
    rule: 'udp-health-check',
  },
  {
    what: 'sslPolicy on a TCP listener',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[0].sslPolicy = 'ELBSecurityPolicy-TLS13-1-2-2021-06'),
    path: 'spec.listeners[0].sslPolicy',
    message: /^only TLS listeners take an sslPolicy \(protocol is TCP\)$/,
    rule: 'tls-fields',
  },
  {
    what: 'duplicate load-balancer subnet',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.loadBalancer.subnetIds = ['subnet-0a1b2c3d4e5f60001', 'subnet-0a1b2c3d4e5f60001']),
    path: 'spec.loadBalancer.subnetIds[1]',
    message: /^duplicates spec\.loadBalancer\.subnetIds\[0\]/,
    rule: 'subnets-unique',
  },
];

describe('a listener that would expose a node service is refused', () => {
  test.each(rows)('$what', (row) => expectRefused(row));
});

describe('what stays allowed', () => {
  test.each([
    [
      'hostPort: true for a hostNetwork ingress on 8443',
      (r: Json) =>
        Object.assign(r.spec.listeners[0], {
          nodePort: 8443,
          hostPort: true,
          healthCheck: { protocol: 'HTTP', port: 10254, path: '/healthz' },
        }),
    ],
    [
      'a TCP_UDP listener with the default health check (its Service answers TCP on the port)',
      (r: Json) => Object.assign(r.spec.listeners[0], { protocol: 'TCP_UDP', healthCheck: undefined }),
    ],
    [
      'the edges of the NodePort range',
      (r: Json) => Object.assign(r.spec.listeners[0], { nodePort: 30000, healthCheck: { port: 32767 } }),
    ],
    [
      'a TLS listener with its sslPolicy',
      (r: Json) =>
        Object.assign(r.spec.listeners[0], {
          protocol: 'TLS',
          certificateArn: CERT,
          sslPolicy: 'ELBSecurityPolicy-TLS13-1-3-2021-06',
        }),
    ],
  ])('%s', (_what, mutate) => {
    // GIVEN a valid example with the edge case
    const raw = rawExample('prod-eu1');
    mutate(raw);
    // WHEN it is validated
    const result = validateCluster(JSON.parse(JSON.stringify(raw)), {
      file: 'clusters/prod-eu1.yaml',
      templates: TEMPLATES,
    });
    // THEN it is valid
    expect(result.problems).toEqual([]);
  });
});

test('every node-service port is refused on a listener, even with hostPort', () => {
  for (const { from, to } of NODE_SERVICE_PORTS) {
    for (const port of new Set([from, to])) {
      // GIVEN a listener with hostPort on a node-service port
      const raw = rawExample('prod-eu1');
      Object.assign(raw.spec.listeners[0], {
        nodePort: port,
        hostPort: true,
        healthCheck: { protocol: 'TCP', port: 30254 },
      });
      // WHEN it is validated
      const result = validateCluster(raw, { file: 'clusters/prod-eu1.yaml', templates: TEMPLATES });
      // THEN exactly that port is refused
      expect(result.problems.map((p) => p.path)).toEqual(['spec.listeners[0].nodePort']);
    }
  }
});
