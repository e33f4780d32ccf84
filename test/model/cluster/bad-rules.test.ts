import { validateCluster } from '../../../lib/model/cluster/validate';
import { BadRow, expectRefused } from '../../helpers/bad-input';
import { rawExample, TEMPLATES } from '../../helpers/clusters';
import { synthCluster } from '../../helpers/synth';
import { Json } from '../../helpers/json';

/**
 * Malformed security-group rules and listeners. Each row breaks one thing in a
 * valid example and names the one field path (plus any path that the same
 * mistake legitimately also breaks) and the rule the message must state.
 */

const CERT = 'arn:aws:acm:eu-west-1:111111111111:certificate/0f0e0d0c-0b0a-0908-0706-050403020100';
const monitoring = (i: number) => ({
  description: `extra ${i}`,
  protocol: 'udp',
  port: 5000 + i,
  source: { self: true },
});

const rows: BadRow[] = [
  // --- ports -----------------------------------------------------------------
  {
    what: 'listener port 70000',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[0].port = 70000),
    path: 'spec.listeners[0].port',
    message: /^70000 is not a port \(1-65535\)$/,
  },
  {
    what: 'rule port 0',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[1].port = 0),
    path: 'spec.securityGroupRules[1].port',
    message: /^0 is not a port \(1-65535\)$/,
  },
  {
    what: 'fractional port 443.5',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[1].port = 443.5),
    path: 'spec.listeners[1].port',
    message: /^443\.5 is not a port \(1-65535\)$/,
  },
  {
    what: 'node port 65536',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[1].nodePort = 65536),
    path: 'spec.listeners[1].nodePort',
    message: /^65536 is not a node port \(1-65535\)$/,
  },
  {
    what: 'port range reversed (fromPort > toPort)',
    example: 'prod-eu1',
    mutate: (r) => Object.assign(r.spec.securityGroupRules[2], { fromPort: 32767, toPort: 30000 }),
    path: 'spec.securityGroupRules[2].fromPort',
    message: /^port range is reversed: fromPort 32767 is greater than toPort 30000$/,
    rule: 'port-range-order',
  },
  {
    what: 'port and range both',
    example: 'prod-eu1',
    mutate: (r) => Object.assign(r.spec.securityGroupRules[0], { fromPort: 10250, toPort: 10255 }),
    path: 'spec.securityGroupRules[0]',
    message: /^give either port or fromPort\+toPort, not both$/,
    rule: 'sg-rule-ports',
  },
  {
    what: 'range with fromPort only',
    example: 'prod-eu1',
    mutate: (r) => delete r.spec.securityGroupRules[2].toPort,
    path: 'spec.securityGroupRules[2]',
    message: /^a port range needs both fromPort and toPort$/,
    rule: 'sg-rule-ports',
  },
  {
    what: 'tcp rule without a port',
    example: 'prod-eu1',
    mutate: (r) => delete r.spec.securityGroupRules[0].port,
    path: 'spec.securityGroupRules[0].port',
    message: /^required field is missing \(tcp rules need a port or a fromPort\+toPort range\)$/,
    rule: 'sg-rule-ports',
  },
  {
    what: 'icmp rule with a port',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[2].port = 8),
    path: 'spec.securityGroupRules[2]',
    message: /^icmp rules take no port \(remove port\/fromPort\/toPort\)$/,
    rule: 'sg-rule-ports',
  },
  {
    what: 'protocol all with a range',
    example: 'staging-us1',
    mutate: (r) => Object.assign(r.spec.securityGroupRules[0], { fromPort: 1, toPort: 1024 }),
    path: 'spec.securityGroupRules[0]',
    message: /^all rules take no port/,
    rule: 'sg-rule-ports',
  },
  // An unknown protocol is reported once, as an unknown protocol; not also as "sctp rules take no port".
  {
    what: 'unknown protocol sctp',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.securityGroupRules[0].protocol = 'sctp'),
    path: 'spec.securityGroupRules[0].protocol',
    message: /^"sctp" is not allowed \(expected one of "tcp", "udp", "icmp", "icmpv6", "all"\)$/,
  },
  {
    what: 'icmpv6 from an IPv4 cidr',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[2].protocol = 'icmpv6'),
    path: 'spec.securityGroupRules[2].protocol',
    message: /^icmpv6 with an IPv4 source cidr never matches/,
    rule: 'icmpv6-source',
  },
  {
    what: 'empty description',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[0].description = ''),
    path: 'spec.securityGroupRules[0].description',
    message: /^"" has 0 characters, at least 1 required$/,
  },

  // --- sources ---------------------------------------------------------------
  {
    what: 'bad IPv4 CIDR (octet 300)',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[1].source.cidr = '10.1.0.300/24'),
    path: 'spec.securityGroupRules[1].source.cidr',
    message: /^"10\.1\.0\.300\/24" is not an IPv4 CIDR \(a\.b\.c\.d\/n, n 0-32\)$/,
  },
  {
    what: 'bad IPv4 CIDR (prefix /33)',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[1].source.cidr = '10.1.0.0/33'),
    path: 'spec.securityGroupRules[1].source.cidr',
    message: /^"10\.1\.0\.0\/33" is not an IPv4 CIDR/,
  },
  {
    what: 'IPv4 CIDR with host bits set',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[1].source.cidr = '10.1.0.5/24'),
    path: 'spec.securityGroupRules[1].source.cidr',
    message: /^10\.1\.0\.5\/24 has host bits set \(did you mean 10\.1\.0\.0\/24\?\)$/,
  },
  {
    what: 'bad IPv6 CIDR',
    example: 'edge-ap1',
    mutate: (r) => (r.spec.securityGroupRules[30].source.cidrIpv6 = '2001:db8::zz/48'),
    path: 'spec.securityGroupRules[30].source.cidrIpv6',
    message: /^"2001:db8::zz\/48" is not an IPv6 CIDR \(addr\/n, n 0-128\)$/,
  },
  {
    what: 'source with two kinds',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[1].source.self = true),
    path: 'spec.securityGroupRules[1].source',
    message:
      /^give exactly one of cidr, cidrIpv6, securityGroupId, prefixListId, self, loadBalancer \(found cidr, self\)$/,
    rule: 'sg-rule-one-source',
  },
  {
    what: 'source with no kind',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[1].source = {}),
    path: 'spec.securityGroupRules[1].source',
    message: /^give exactly one of .* \(found none\)$/,
    rule: 'sg-rule-one-source',
  },
  {
    what: 'malformed security group id',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.securityGroupRules[0].source.securityGroupId = 'sg-123'),
    path: 'spec.securityGroupRules[0].source.securityGroupId',
    message: /^"sg-123" is not a security group id \(sg- followed by 8 or 17 hex digits\)$/,
  },
  {
    what: 'self: false',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.securityGroupRules[1].source.self = false),
    path: 'spec.securityGroupRules[1].source.self',
    message: /^false is not allowed \(expected one of true\)$/,
  },
  {
    what: 'loadBalancer source with no listeners',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[1].source = { loadBalancer: true }),
    path: 'spec.securityGroupRules[1].source.loadBalancer',
    message: /^the cluster has no listeners, so no load balancer$/,
    rule: 'load-balancer-source',
  },
  {
    what: 'duplicate rule (same protocol, port and source, other description)',
    example: 'prod-eu1',
    mutate: (r) => r.spec.securityGroupRules.push({ ...r.spec.securityGroupRules[0], description: 'kubelet again' }),
    path: 'spec.securityGroupRules[4]',
    message: /^duplicates spec\.securityGroupRules\[0\] \(rules \(same protocol, ports and source\) must be unique\)$/,
    rule: 'sg-rules-unique',
  },
  ...(
    [
      ['upper case', '2001:DB8:1::/48'],
      ['leading zeros', '2001:0db8:0001::/48'],
      ['zeros written out', '2001:db8:1:0:0:0:0:0/48'],
    ] as const
  ).map(([form, written]): BadRow => ({
    // Issue 32 item 11: AWS stores the canonical form, so these were one rule twice, failing at deploy time. The
    // form is refused on its field (the CRD's CEL says the same; comparing canonical forms across the list would
    // exceed the API server's cost budget), and the duplicate is named as well.
    what: `duplicate rule, its IPv6 source in another form (${form})`,
    example: 'prod-eu1',
    mutate: (r: Json) =>
      r.spec.securityGroupRules.push(
        { protocol: 'tcp', port: 443, description: 'v6 a', source: { cidrIpv6: '2001:db8:1::/48' } },
        { protocol: 'tcp', port: 443, description: 'v6 b', source: { cidrIpv6: written } },
      ),
    path: 'spec.securityGroupRules[5].source.cidrIpv6',
    message: new RegExp(
      `^"${written.replace(/[.]/g, '\\.')}" is not written in canonical form \\(RFC 5952: .*\\(write 2001:db8:1::/48\\)$`,
    ),
    alsoAt: ['spec.securityGroupRules[5]'],
  })),
  {
    // edge-ap1 has 33 rules and 25 listener node-port rules (a UDP listener's node port needs a udp rule and a tcp
    // health-check rule): 58; 3 more rules make 61.
    what: 'too many rules (over 60 counting listener node-port rules)',
    example: 'edge-ap1',
    mutate: (r) => r.spec.securityGroupRules.push(...Array.from({ length: 3 }, (_, i) => monitoring(i))),
    path: 'spec.securityGroupRules',
    message: /^36 rules \+ 25 listener node-port rules = 61, over the AWS limit of 60 inbound rules per security group/,
    rule: 'sg-rules-limit',
  },
  {
    // A TCP_UDP listener needs a tcp and a udp client rule per allowed CIDR: 31 listeners × 2 × 1 CIDR = 62.
    what: 'TCP_UDP listeners count twice against the client-rule limit',
    example: 'prod-eu1',
    mutate: (r) => {
      r.spec.listeners = Array.from({ length: 31 }, (_, i) => ({
        name: `dns-${i}`,
        protocol: 'TCP_UDP',
        port: 5300 + i,
        nodePort: 31053,
      }));
      r.spec.securityGroupRules = r.spec.securityGroupRules.filter((x: Json) => !x.source.loadBalancer);
    },
    path: 'spec.loadBalancer.allowedCidrs',
    message:
      /^31 listeners \(62 with each TCP_UDP listener counted twice\) × 1 CIDRs = 62 rules, over the AWS limit of 60/,
    rule: 'client-rules-limit',
  },

  // --- listeners -------------------------------------------------------------
  {
    what: 'duplicate listener port',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[1].port = 443),
    path: 'spec.listeners[1].port',
    message: /^duplicates spec\.listeners\[0\]\.port \(listener ports must be unique\)$/,
    rule: 'listeners-unique',
  },
  {
    what: 'duplicate listener name',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[1].name = 'ingress-https'),
    path: 'spec.listeners[1].name',
    message: /^duplicates spec\.listeners\[0\]\.name \(listener names must be unique\)$/,
    rule: 'listeners-unique',
  },
  {
    what: 'listener name not a DNS label',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[0].name = 'Ingress_HTTPS'),
    path: 'spec.listeners[0].name',
    message: /^"Ingress_HTTPS" is not a DNS label/,
  },
  {
    what: 'unknown field in a listener (nodeport typo)',
    example: 'prod-eu1',
    mutate: (r) => {
      r.spec.listeners[0].nodeport = r.spec.listeners[0].nodePort;
      delete r.spec.listeners[0].nodePort;
    },
    path: 'spec.listeners[0].nodeport',
    message: /^unknown field/,
    alsoAt: ['spec.listeners[0].nodePort'],
  },
  {
    // Their node ports repeat 31001, so only the listener limits are crossed, not the rule limit.
    what: 'too many listeners (51)',
    example: 'edge-ap1',
    mutate: (r) =>
      r.spec.listeners.push(
        ...Array.from({ length: 32 }, (_, i) => ({ name: `extra-${i}`, port: 8000 + i, nodePort: 31001 })),
      ),
    path: 'spec.listeners',
    message: /^51 listeners exceed the AWS limit of 50 per load balancer$/,
    rule: 'listeners-limit',
  },
  {
    what: 'listeners × allowed CIDRs over the rule limit',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.loadBalancer.allowedCidrs = Array.from({ length: 31 }, (_, i) => `10.${i}.0.0/16`)),
    path: 'spec.loadBalancer.allowedCidrs',
    message: /^2 listeners × 31 CIDRs = 62 rules, over the AWS limit of 60/,
    rule: 'client-rules-limit',
  },
  {
    what: 'TLS listener without certificateArn',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[0].protocol = 'TLS'),
    path: 'spec.listeners[0].certificateArn',
    message: /^required field is missing \(TLS listeners need an ACM certificate\)$/,
    rule: 'tls-fields',
  },
  {
    what: 'certificateArn on a TCP listener',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[0].certificateArn = CERT),
    path: 'spec.listeners[0].certificateArn',
    message: /^only TLS listeners take a certificate \(protocol is TCP\)$/,
    rule: 'tls-fields',
  },
  {
    what: 'malformed certificateArn',
    example: 'edge-ap1',
    mutate: (r) => (r.spec.listeners[18].certificateArn = 'arn:aws:acm:certificate/x'),
    path: 'spec.listeners[18].certificateArn',
    message: /^"arn:aws:acm:certificate\/x" is not an ACM certificate ARN$/,
  },
  {
    what: 'HTTP path on a TCP health check',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[0].healthCheck.protocol = 'TCP'),
    path: 'spec.listeners[0].healthCheck.path',
    message: /^a TCP health check takes no path \(use protocol HTTP or HTTPS\)$/,
    rule: 'tcp-health-check-path',
  },
  {
    what: 'health check interval 15',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[0].healthCheck.intervalSeconds = 15),
    path: 'spec.listeners[0].healthCheck.intervalSeconds',
    message: /^15 is not allowed \(expected one of 10, 30\)$/,
  },
  {
    what: 'listener protocol HTTP',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[1].protocol = 'HTTP'),
    path: 'spec.listeners[1].protocol',
    message: /^"HTTP" is not allowed \(expected one of "TCP", "UDP", "TCP_UDP", "TLS"\)$/,
  },
  {
    what: 'listeners without loadBalancer',
    example: 'prod-eu1',
    mutate: (r) => delete r.spec.loadBalancer,
    path: 'spec.loadBalancer',
    message: /^required field is missing \(listeners need a load balancer with allowedCidrs\)$/,
    rule: 'listeners-need-load-balancer',
  },
];

describe('a malformed rule or listener is refused with its field path and rule', () => {
  test.each(rows)('$what', (row) => expectRefused(row));
});

describe('the limits themselves are allowed', () => {
  test('exactly 60 rules including listener node-port rules: valid, and the synthesized worker group has exactly 60', () => {
    // GIVEN edge-ap1 (33 rules + 25 node-port rules) with 2 more rules: 60 in all
    const raw = rawExample('edge-ap1');
    raw.spec.securityGroupRules!.push(...(Array.from({ length: 2 }, (_, i) => monitoring(i)) as Json[]));

    // WHEN it is validated and synthesized
    const result = validateCluster(raw, { file: 'clusters/edge-ap1.yaml', templates: TEMPLATES });
    const { json } = synthCluster(result.cluster!);

    // THEN it is valid, and validation counted exactly the ingress rules synthesis built on the worker group
    expect(result.problems).toEqual([]);
    const onPool = Object.values<Json>(json.Resources).filter(
      (r) =>
        r.Type === 'AWS::EC2::SecurityGroupIngress' &&
        JSON.stringify(r.Properties.GroupId).includes('PoolSecurityGroup'),
    );
    expect(onPool).toHaveLength(60);
  });

  test('exactly 50 listeners', () => {
    // GIVEN edge-ap1 (19 listeners) with 31 more that reuse a node port
    const raw = rawExample('edge-ap1');
    raw.spec.listeners!.push(
      ...Array.from({ length: 31 }, (_, i) => ({ name: `extra-${i}`, port: 8000 + i, nodePort: 31001 })),
    );

    // WHEN it is validated
    const result = validateCluster(raw, { file: 'clusters/edge-ap1.yaml', templates: TEMPLATES });

    // THEN it is valid
    expect(result.problems).toEqual([]);
    expect(result.cluster?.spec.listeners).toHaveLength(50);
  });
});

describe('rules that AWS would see as one', () => {
  test('a single port and a one-port range with the same source are duplicates', () => {
    // GIVEN
    const raw = rawExample('staging-us1');
    raw.spec.securityGroupRules.push({ description: 'a', protocol: 'tcp', port: 22, source: { cidr: '10.0.0.0/8' } });
    raw.spec.securityGroupRules.push({
      description: 'b',
      protocol: 'tcp',
      fromPort: 22,
      toPort: 22,
      source: { cidr: '10.0.0.0/8' },
    });
    // WHEN
    const r = validateCluster(raw, { file: 'clusters/staging-us1.yaml', templates: TEMPLATES });
    // THEN
    expect(r.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      expect.stringMatching(/^spec\.securityGroupRules\[4\]: duplicates spec\.securityGroupRules\[3\]/),
    ]);
  });

  test.each([
    ['2001:db8::1/32', /host bits set/],
    ['2001:db8:1234::/48', undefined],
    ['::/0', undefined],
    ['::ffff:10.0.0.0/104', undefined],
    ['::ffff:10.0.0.1/104', /host bits set/],
  ])('IPv6 CIDR %s', (cidr, error) => {
    // GIVEN
    const raw = rawExample('staging-us1');
    // (on a port that is no node service: ::/0 may reach it)
    Object.assign(raw.spec.securityGroupRules[1], { port: 443, source: { cidrIpv6: cidr } });
    // WHEN
    const r = validateCluster(raw, { file: 'clusters/staging-us1.yaml', templates: TEMPLATES });
    // THEN
    if (error)
      expect(r.problems).toEqual([
        expect.objectContaining({
          path: 'spec.securityGroupRules[1].source.cidrIpv6',
          message: expect.stringMatching(error),
        }),
      ]);
    else expect(r.problems).toEqual([]);
  });
});
