import {
  cidrRange,
  firstPublicAddress,
  nonPublicCidrs,
  publicAddressCount,
} from '../../../../lib/model/cluster/network/address-space';
import { validateCluster } from '../../../../lib/model/cluster/validate';
import { rawExample, TEMPLATES } from '../../../helpers/clusters';

/**
 * World exposure written other ways (issue 21): node services and protocol all are refused from any source CIDR that
 * holds a public address, decided on addresses (IANA special-purpose registries), not on the text of the CIDR.
 */

const FILE = 'clusters/staging-us1.yaml';
type Rule = {
  description: string;
  protocol: string;
  port?: number;
  fromPort?: number;
  toPort?: number;
  source: Record<string, string>;
};
const rule = (protocol: string, ports: Partial<Rule>, source: Record<string, string>): Rule => ({
  description: 'under test',
  protocol,
  ...ports,
  source,
});

/** staging-us1 with its rules replaced by `rules`: every problem of the object. */
function problemsWith(rules: Rule[]) {
  const raw = rawExample('staging-us1');
  raw.spec.securityGroupRules = rules;
  return validateCluster(raw, { file: FILE, templates: TEMPLATES }).problems;
}

describe('a node service or protocol all from public space is refused, however the CIDR is written', () => {
  test.each<[string, Rule[], string[]]>([
    [
      'SSH from 0.0.0.0/1 + 128.0.0.0/1',
      [rule('tcp', { port: 22 }, { cidr: '0.0.0.0/1' }), rule('tcp', { port: 22 }, { cidr: '128.0.0.0/1' })],
      ['spec.securityGroupRules[0].source.cidr', 'spec.securityGroupRules[1].source.cidr'],
    ],
    [
      'SSH from 2000::/3',
      [rule('tcp', { port: 22 }, { cidrIpv6: '2000::/3' })],
      ['spec.securityGroupRules[0].source.cidrIpv6'],
    ],
    [
      'the kubelet from 0.0.0.0/1',
      [rule('tcp', { port: 10250 }, { cidr: '0.0.0.0/1' })],
      ['spec.securityGroupRules[0].source.cidr'],
    ],
    [
      'etcd from 64.0.0.0/4',
      [rule('tcp', { fromPort: 2379, toPort: 2380 }, { cidr: '64.0.0.0/4' })],
      ['spec.securityGroupRules[0].source.cidr'],
    ],
    [
      'all traffic from ::/1 + 8000::/1',
      [rule('all', {}, { cidrIpv6: '::/1' }), rule('all', {}, { cidrIpv6: '8000::/1' })],
      ['spec.securityGroupRules[0].source.cidrIpv6', 'spec.securityGroupRules[1].source.cidrIpv6'],
    ],
    [
      'a range that spans SSH from one public /32',
      [rule('tcp', { fromPort: 1, toPort: 1024 }, { cidr: '8.8.8.8/32' })],
      ['spec.securityGroupRules[0].source.cidr'],
    ],
    [
      'udp VXLAN from a public /24',
      [rule('udp', { port: 4789 }, { cidr: '192.88.99.0/24' })],
      ['spec.securityGroupRules[0].source.cidr'],
    ],
    [
      'the kubelet from 192.0.0.8/29 (holds the PCP anycast address, public inside a private block)',
      [rule('tcp', { port: 10250 }, { cidr: '192.0.0.8/29' })],
      ['spec.securityGroupRules[0].source.cidr'],
    ],
  ])('%s', (_what, rules, paths) => {
    // WHEN
    const problems = problemsWith(rules);
    // THEN every offending rule is named at its source, with the rule stated
    expect(problems.map((p) => p.path).sort()).toEqual(paths);
    for (const p of problems)
      expect(p.message).toMatch(
        / holds public addresses \(.+ the first\), and the rule opens .*; node services and protocol all are open only to non-public sources/,
      );
  });

  test('the message names the first public address and the service', () => {
    // WHEN
    const [p] = problemsWith([rule('tcp', { port: 22 }, { cidr: '0.0.0.0/1' })]);
    // THEN 0.0.0.0/8 is "this network" (not public): the first public address is 1.0.0.0
    expect(p).toEqual({
      file: FILE,
      path: 'spec.securityGroupRules[0].source.cidr',
      message: expect.stringMatching(
        /^0\.0\.0\.0\/1 holds public addresses \(1\.0\.0\.0 the first\), and the rule opens tcp 22, the port of SSH \(22\);.* \(rule no-public-node-service\)$/,
      ),
      rule: 'no-public-node-service',
    });
  });
});

describe('what stays allowed', () => {
  test.each<[string, Rule[]]>([
    ['SSH from a private range', [rule('tcp', { port: 22 }, { cidr: '10.0.0.0/8' })]],
    ['all traffic from the shared address space', [rule('all', {}, { cidr: '100.64.0.0/10' })]],
    ['the kubelet from unique-local IPv6', [rule('tcp', { port: 10250 }, { cidrIpv6: 'fd00::/8' })]],
    ['a web port from the whole internet (not a node service)', [rule('tcp', { port: 443 }, { cidr: '0.0.0.0/0' })]],
    ['ICMP from anywhere', [rule('icmp', {}, { cidr: '0.0.0.0/0' })]],
    ['SSH from a bastion security group', [rule('tcp', { port: 22 }, { securityGroupId: 'sg-0123456789abcdef0' })]],
    ['etcd from a documentation range', [rule('tcp', { fromPort: 2379, toPort: 2380 }, { cidr: '198.51.100.0/24' })]],
  ])('%s', (_what, rules) => {
    expect(problemsWith(rules)).toEqual([]);
  });
});

describe('address arithmetic (exact, BigInt for IPv6)', () => {
  test.each([
    ['10.0.0.0/8', 0n],
    ['0.0.0.0/0', 2n ** 32n - 324273150n],
    ['192.0.0.0/24', 2n],
    ['::/0', 2n ** 128n - publicComplement6()],
    ['2001:db8::/32', 0n],
  ])('%s has %s public addresses', (cidr, count) => {
    expect(publicAddressCount(cidrRange(cidr)!)).toBe(count);
  });

  test('the CEL blocks cover exactly the non-public space', () => {
    // GIVEN the fewest CIDRs of the non-public space, per family
    for (const family of [4, 6] as const) {
      const blocks = nonPublicCidrs(family).map((c) => cidrRange(c)!);
      // THEN none holds a public address, and they add up to the same number of addresses
      for (const b of blocks) expect(firstPublicAddress(b)).toBeUndefined();
      const all = cidrRange(family === 4 ? '0.0.0.0/0' : '::/0')!;
      const total = blocks.reduce((n, b) => n + (b.last - b.first + 1n), 0n);
      expect(total).toBe(all.last + 1n - publicAddressCount(all));
    }
  });
});

/** The non-public IPv6 addresses, counted from the registry's blocks by hand (all disjoint). */
function publicComplement6(): bigint {
  const size = (bits: number) => 2n ** BigInt(128 - bits);
  return [128, 128, 96, 48, 64, 48, 28, 32, 20, 16, 7, 10].reduce((n, b) => n + size(b), 0n);
}
