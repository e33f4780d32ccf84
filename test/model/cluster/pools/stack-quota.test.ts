import {
  DEFAULT_STACK_LIMIT,
  PlannedStacks,
  plannedStacks,
  quotaPercent,
  stackQuotaWarnings,
} from '../../../../lib/model/cluster/pools/stack-quota';
import { example, rawExample, validated } from '../../../helpers/clusters';
import { Json } from '../../../helpers/json';
import { rawPoolsExample } from '../../../helpers/named-pools';

/**
 * CloudFormation's stack quota per account and region against the stacks a fleet plans there (issue 23 item 2): Σ
 * stackUnits per cluster + 1 bootstrap stack, warned about at 80 % of the limit.
 */

/** A copy of an object under another name (its secret follows), changed by `mutate`, validated. */
function named(raw: Json, name: string, mutate: (o: Json) => void = () => undefined) {
  const o = structuredClone(raw);
  o.spec.cloudConfig.values.bootstrapTokenSecretArn = o.spec.cloudConfig.values.bootstrapTokenSecretArn.replace(
    `/${o.metadata.name}/`,
    `/${name}/`,
  );
  o.metadata.name = name;
  mutate(o);
  return validated(o, `clusters/${name}.yaml`);
}

test.each([
  [
    'one single-pool cluster: its stack and the bootstrap stack',
    () => [example('prod-eu1')],
    [['111111111111/eu-west-1', 1, 1, 2]],
  ],
  [
    'named pools without default: the shared stack and one per pool',
    () => [named(rawPoolsExample(), 'p1')],
    [['111111111111/eu-west-1', 1, 4, 5]],
  ],
  [
    'a pool named default lives in the shared stack',
    () => [named(rawPoolsExample(), 'p1', (o) => (o.spec.pools[0].name = 'default'))],
    [['111111111111/eu-west-1', 1, 3, 4]],
  ],
  [
    'clusters of one account and region add up; another region and account are counted apart',
    () => [
      example('prod-eu1'),
      named(rawPoolsExample(), 'p1'),
      named(rawExample('prod-eu1'), 'p2', (o) => {
        o.spec.region = 'eu-central-1';
        o.spec.network.availabilityZones = ['eu-central-1a', 'eu-central-1b', 'eu-central-1c'];
        const v = o.spec.cloudConfig.values;
        v.bootstrapTokenSecretArn = v.bootstrapTokenSecretArn.replace(':eu-west-1:', ':eu-central-1:');
      }),
      example('staging-us1'),
    ],
    [
      ['111111111111/eu-central-1', 1, 1, 2],
      ['111111111111/eu-west-1', 2, 5, 6],
      ['222222222222/us-east-1', 1, 1, 2],
    ],
  ],
])('planned stacks: %s', (_what, fleet, expected) => {
  // WHEN
  const planned = plannedStacks(fleet());
  // THEN [account/region, clusters, cluster stacks, planned]
  expect(planned.map((p) => [`${p.account}/${p.region}`, p.clusters, p.clusterStacks, p.planned])).toEqual(expected);
});

const at = (clusterStacks: number, clusters = 1): PlannedStacks => ({
  account: '111111111111',
  region: 'eu-west-1',
  clusters,
  clusterStacks,
  planned: clusterStacks + 1,
});

test.each([
  // [cluster stacks, limit, warned, percent in the message]
  [1598, DEFAULT_STACK_LIMIT, false, undefined],
  [1599, DEFAULT_STACK_LIMIT, true, 80],
  [1999, DEFAULT_STACK_LIMIT, true, 100],
  [2000, DEFAULT_STACK_LIMIT, true, 100],
  [3000, DEFAULT_STACK_LIMIT, true, 150],
  [6, 10, false, undefined],
  [7, 10, true, 80],
  [3998, 5000, false, undefined],
  [3999 + 1, 5000, true, 80],
])('%d cluster stacks + 1 bootstrap against a limit of %d: warned %s', (clusterStacks, limit, warned, percent) => {
  // WHEN
  const warnings = stackQuotaWarnings([at(clusterStacks, 400)], () => ({ limit, source: 'the AWS default' }));
  // THEN
  expect(warnings.length).toBe(warned ? 1 : 0);
  if (!warned) return;
  expect(quotaPercent(clusterStacks + 1, limit)).toBe(percent);
  expect(warnings[0].message).toBe(
    `account 111111111111 region eu-west-1: ${clusterStacks + 1} planned stacks (${clusterStacks} of 400 clusters and their pools, + 1 bootstrap) are ${percent} % of CloudFormation's limit of ${limit} stacks per account and region (the AWS default)${clusterStacks + 1 > limit ? ': the stacks beyond it cannot be created' : ''}; the account's other stacks count too. Ask AWS for a higher "Stack count" quota (Service Quotas, AWS CloudFormation) before more stacks fail to create, or use fewer pools`,
  );
});

test('each account and region is held against its own limit', () => {
  // GIVEN two regions of 1,700 planned stacks, one with a raised quota
  const planned = [at(1699), { ...at(1699), region: 'us-east-1' }];
  // WHEN
  const warnings = stackQuotaWarnings(planned, (_a, region) =>
    region === 'us-east-1'
      ? { limit: 5000, source: 'DescribeAccountLimits' }
      : { limit: 2000, source: 'the AWS default' },
  );
  // THEN only the region at its default is warned about
  expect(warnings.map((w) => [w.region, w.limit, w.limitSource])).toEqual([['eu-west-1', 2000, 'the AWS default']]);
});
