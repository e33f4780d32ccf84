import { UsageError } from '../../../lib/core/errors';
import { LabelSelector } from '../../../lib/platform/kube/label-selector';
import { Lease } from '../../../lib/platform/kube/leader-election';
import {
  checkShardName,
  isLive,
  scopeOfLease,
  scopesOverlap,
  shardLeaseMetadata,
  shardLeaseName,
  ShardScope,
} from '../../../lib/platform/kube/shards';

const scope = (selector: string, namespace?: string, shard?: string): ShardScope => ({
  selector: LabelSelector.parse(selector),
  namespace,
  shard,
});

describe("a shard's Lease is named from its scope", () => {
  test("docs/kubernetes.md's two shards (-A -l tier=canary, -A -l tier!=canary) get two Leases, and the whole fleet keeps worker-stacks", () => {
    // WHEN
    const names = [
      shardLeaseName(scope('tier=canary')),
      shardLeaseName(scope('tier!=canary')),
      shardLeaseName(scope('')),
    ];
    // THEN
    expect(new Set(names).size).toBe(3);
    expect(names[2]).toBe('worker-stacks');
    for (const n of names.slice(0, 2)) expect(n).toMatch(/^worker-stacks-[0-9a-f]{10}$/);
  });

  test('the name is deterministic: every replica of a shard, however it spells the selector, names the same Lease', () => {
    expect(shardLeaseName(scope('tier=canary,region=eu'))).toBe(shardLeaseName(scope(' region == eu , tier=canary')));
  });

  test('the namespace is part of the scope: two namespaces, two Leases', () => {
    expect(shardLeaseName(scope('', 'team-a'))).not.toBe(shardLeaseName(scope('', 'team-b')));
  });

  test('--shard names the Lease itself; a name that is not a short DNS label is refused', () => {
    expect(shardLeaseName(scope('tier=canary', undefined, 'canary'))).toBe('worker-stacks-canary');
    expect(() => checkShardName('Canary_1')).toThrow(UsageError);
    expect(() => checkShardName('a'.repeat(41))).toThrow(UsageError);
  });
});

describe('the Lease carries the scope, so that a starting shard knows the others', () => {
  const lease = (
    name: string,
    annotations: Record<string, string> | undefined,
    holder = 'pod-1',
    renewedAgoMs = 1000,
    now = Date.parse('2026-01-01T00:00:00Z'),
  ): [Lease, number] => [
    {
      metadata: { name, annotations },
      spec: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime: new Date(now - renewedAgoMs).toISOString() },
    },
    now,
  ];

  test('a scope written on a Lease reads back as the same scope', () => {
    // GIVEN
    const s = scope('tier notin (a,b)', 'platform', 'rest');
    // WHEN
    const [l] = lease('worker-stacks-rest', shardLeaseMetadata(s).annotations);
    const back = scopeOfLease(l)!;
    // THEN
    expect({ shard: back.shard, namespace: back.namespace, selector: back.selector.toString() }).toEqual({
      shard: 'rest',
      namespace: 'platform',
      selector: 'tier notin (a,b)',
    });
  });

  test("an older release's Lease worker-stacks (no annotations) is the whole fleet; another unannotated Lease is not a shard", () => {
    expect(scopeOfLease(lease('worker-stacks', undefined)[0])!.selector.empty).toBe(true);
    expect(scopeOfLease(lease('kube-scheduler', undefined)[0])).toBeUndefined();
  });

  test.each([
    // holder, renewed ms ago, live
    ['pod-1', 1000, true],
    ['pod-1', 16_000, false],
    ['', 1000, false],
  ])('holder %j renewed %i ms ago (duration 15 s): live %s', (holder, ago, live) => {
    const [l, now] = lease('worker-stacks-x', {}, holder, ago);
    expect(isLive(l, now)).toBe(live);
  });

  test.each([
    // a, b, overlap
    [scope('tier=canary'), scope('tier!=canary'), false],
    [scope('tier=canary'), scope(''), true],
    [scope('', 'team-a'), scope('', 'team-b'), false],
    [scope('', 'team-a'), scope('tier=x'), true],
  ])('scopes %#: overlap %s', (a, b, expected) => {
    expect(scopesOverlap(a, b)).toBe(expected);
  });
});
