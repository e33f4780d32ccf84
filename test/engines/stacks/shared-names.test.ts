import fc from 'fast-check';
import { WorkerCluster } from '../../../lib/model/cluster/schema/schema';
import { poolStackName, workerStackName } from '../../../lib/core/naming';
import { EXAMPLE_NAMES, example, validated } from '../../helpers/clusters';
import { Json } from '../../helpers/json';
import { arbitraryPoolsObject } from '../../helpers/pools-arbitrary';
import { grantsPolicyName } from '../../../lib/engines/stacks/shared-role-grants';
import { claimsOf, sharedClaims } from './shared-claims';
import { synthAll } from './pool-helpers';

/**
 * Issue 33, finding 7: the stacks of one cluster never make the same claim on one thing (an inline policy's name on
 * the shared role, a physical name, a rule on a security group, a queue's policy). CloudFormation keeps no record
 * across stacks: of two stacks that write the same inline policy on the shared role, the last one wins, and deleting
 * either deletes it under the other.
 */

const templatesOf = (cluster: WorkerCluster): Map<string, Json> =>
  new Map([...synthAll(cluster)].map(([name, text]) => [name, JSON.parse(text)]));

test.each(EXAMPLE_NAMES)('no two stacks of the example %s claim the same name', (name) => {
  // GIVEN the example's stacks
  const templates = templatesOf(example(name));
  // WHEN their claims are gathered
  const shared = sharedClaims(claimsOf(templates));
  // THEN each claim is one stack's
  expect(shared).toEqual([]);
});

test('a pool stack’s inline policy is a claim on the shared stack’s role, under the pool’s own name', () => {
  // GIVEN apps-eu1 (default in the shared stack, spot and arm in their own)
  const templates = templatesOf(example('apps-eu1'));
  // WHEN its claims are gathered
  const claims = claimsOf(templates).map((c) => c.claim);
  // THEN the imported role is the shared stack's own role (the claims compare across stacks), and each pool names its policy
  const role = `${workerStackName('apps-eu1')}/PoolRole689224AE`;
  expect(claims).toEqual(
    expect.arrayContaining([
      `inline policy signal-pool-spot of role ${role}`,
      `inline policy signal-pool-arm of role ${role}`,
    ]),
  );
});

test('every inline policy of a pool stack carries its pool’s name, aws-cdk-lib’s own grants too', () => {
  // GIVEN apps-eu1, whose arm pool waits for its first node at creation (aws-cdk-lib grants the group's signal then)
  const templates = templatesOf(example('apps-eu1'));
  // WHEN the pool stacks' inline policies are read
  const policies = ['spot', 'arm'].flatMap((pool) =>
    Object.values(templates.get(poolStackName('apps-eu1', pool)).Resources as Record<string, Json>)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .map((r) => [pool, r.Properties.PolicyName as string]),
  );
  // THEN each is named after its pool: the signal policy, and the arm group's grant under a name of the arm pool's
  expect(policies).toEqual([
    ['spot', 'signal-pool-spot'],
    ['arm', grantsPolicyName('arm')],
    ['arm', 'signal-pool-arm'],
  ]);
});

test('no two stacks of a cluster with generated pools claim the same name', () => {
  fc.assert(
    fc.property(arbitraryPoolsObject(), (raw) => {
      // GIVEN a cluster of two to four pools of any kind
      const cluster = validated(raw, 'clusters/apps-eu1.yaml');
      // WHEN every stack is synthesized and its claims are gathered
      const shared = sharedClaims(claimsOf(templatesOf(cluster)));
      // THEN each claim is one stack's
      expect(shared).toEqual([]);
    }),
    { seed: 33, numRuns: 20 },
  );
});
