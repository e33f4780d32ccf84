import { Validations } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { buildFleetApp } from '../../../lib/engines/stacks/app';
import { example, EXAMPLE_NAMES, tempDir, variant } from '../../helpers/clusters';
import { POOLS_FIXTURE, poolsVariant } from './pool-helpers';

// The examples, and the three-pool fixture (its pool stacks are nagged like the shared ones).
const fleet = (
  clusters = [
    ...EXAMPLE_NAMES.map((n) => ({ file: `clusters/${n}.yaml`, cluster: example(n) })),
    { file: POOLS_FIXTURE, cluster: poolsVariant() },
  ],
) => buildFleetApp({ clusters, outdir: tempDir('nag'), nag: true, bootstrap: true });

/** Every acknowledgement recorded anywhere in the tree: [construct path, rule id, reason]. */
function acknowledgements(root: IConstruct): Array<[string, string, string]> {
  return root.node
    .findAll()
    .flatMap((c) =>
      c.node.metadata
        .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((m) =>
          Object.entries(m.data as Record<string, string>).map(
            ([id, reason]) => [c.node.path, id.replace(/^Annotation::/, ''), reason] as [string, string, string],
          ),
        ),
    );
}

test('the example fleet passes the AwsSolutions pack with no unacknowledged finding', () => {
  // GIVEN
  const { app } = fleet();
  // WHEN / THEN: synth throws on any unacknowledged error
  expect(() => app.synth()).not.toThrow();
});

test('every acknowledgement carries a real reason', () => {
  // GIVEN
  const { app } = fleet();
  // WHEN
  const acks = acknowledgements(app);
  // THEN
  expect(acks.length).toBeGreaterThan(0);
  for (const [where, id, reason] of acks) {
    expect({ where, id, reasonLength: reason.length >= 60 }).toEqual({ where, id, reasonLength: true });
  }
  expect(new Set(acks.map(([, id]) => id.replace(/\[.*$/, '')))).toEqual(
    new Set([
      'AwsSolutions-IAM5',
      'AwsSolutions-AS3',
      'AwsSolutions-EC26',
      'AwsSolutions-ELB2',
      'AwsSolutions-EC23',
      'AwsSolutions-S1',
      'AwsSolutions-SQS3',
    ]),
  );
});

test('cdk-nag is live: an internal load balancer open to the world is an unacknowledged finding', () => {
  // GIVEN: 0.0.0.0/0 is acknowledged only for internet-facing load balancers
  const cluster = variant('prod-eu1', (raw) => {
    raw.spec.loadBalancer.allowedCidrs = ['0.0.0.0/0'];
  });
  const { app } = fleet([{ file: 'clusters/prod-eu1.yaml', cluster }]);
  // WHEN / THEN
  expect(() => app.synth()).toThrow(/AwsSolutions-EC23/);
});

test("the IAM wildcard acknowledgements of a worker stack cover only the cluster prefix, its own group's id, and describe calls", () => {
  // GIVEN
  const { app } = fleet();
  // WHEN (the bootstrap stacks' roles are test/engines/stacks/bootstrap-roles.test.ts's)
  const iam = acknowledgements(app).filter(
    ([where, id]) => id.startsWith('AwsSolutions-IAM5') && where.startsWith('WorkerStack-'),
  );
  // THEN the node role: its cluster's prefix; the termination handler's policy: its group (any id) and the describe calls,
  // and for a spec.pools object the groups of its own pool stacks (WorkerStack-<cluster>-Pool-*)
  const pools = poolsVariant();
  expect(iam.map(([, id]) => id).sort()).toEqual(
    [...EXAMPLE_NAMES.map(example), pools]
      .flatMap((c) => {
        const n = c.metadata.name;
        return [
          `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::worker-stacks-config-${c.spec.account}-${c.spec.region}/clusters/${n}/*]`,
          `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:autoscaling:${c.spec.region}:${c.spec.account}:autoScalingGroup:*:autoScalingGroupName/<PoolGroupASG2416841C>]`,
          'AwsSolutions-IAM5[Resource::*]',
          ...(c.spec.pools
            ? [
                `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:autoscaling:${c.spec.region}:${c.spec.account}:autoScalingGroup:*:autoScalingGroupName/WorkerStack-${n}-Pool-*]`,
              ]
            : []),
        ];
      })
      .sort(),
  );
});
