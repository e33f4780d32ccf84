import fc from 'fast-check';
import { poolStackName, workerStackName } from '../../lib/core/naming';
import { dnsLabel } from '../../lib/model/cluster/schema/rules';

/**
 * A pool stack's name belongs to one cluster and one pool, whatever the names: what reaches "the pool stacks of cluster
 * c" by prefix (the node boundary's signal, the drain rule and its handler policy, review) reaches nothing of another
 * cluster. Cluster and pool names are DNS labels (lowercase); the `-Pool-` between them has a capital.
 */

/** Names as validation takes them (checked against the schema's own rule, so the property covers the real inputs). */
const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,14}[a-z0-9])?$/).filter((s) => dnsLabel.safeParse(s).success);

test.each([
  // cluster, pool, another cluster whose name looks like that pool stack's in lowercase
  ['a', 'b', 'a-pool-b'],
  ['prod', 'spot', 'prod-pool-spot'],
])('cluster %s’s pool %s and a cluster named %s have stacks of their own', (cluster, pool, other) => {
  // WHEN / THEN
  expect(poolStackName(cluster, pool)).not.toBe(workerStackName(other));
  expect(workerStackName(other).startsWith(poolStackName(cluster, ''))).toBe(false);
});

test('no shared stack has a pool stack’s name or its cluster’s pool prefix', () => {
  fc.assert(
    fc.property(label, label, label, (cluster, pool, other) => {
      // GIVEN cluster's pool stacks and any cluster's shared stack
      // THEN
      expect(workerStackName(other)).not.toBe(poolStackName(cluster, pool));
      expect(workerStackName(other).startsWith(poolStackName(cluster, ''))).toBe(false);
    }),
    { seed: 23, numRuns: 2000 },
  );
});

test('two pool stacks share a name only as the same cluster and pool; the prefix of a cluster reaches only its own', () => {
  fc.assert(
    fc.property(label, label, label, label, (c1, p1, c2, p2) => {
      // WHEN
      const same = c1 === c2 && p1 === p2;
      // THEN
      expect(poolStackName(c1, p1) === poolStackName(c2, p2)).toBe(same);
      expect(poolStackName(c2, p2).startsWith(poolStackName(c1, ''))).toBe(c1 === c2);
    }),
    { seed: 23, numRuns: 2000 },
  );
});
