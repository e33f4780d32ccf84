import { DescribeStackEventsCommand, StackEvent } from '@aws-sdk/client-cloudformation';
import { poolStackName, workerStackName } from '../../lib/core/naming';
import { Json } from '../helpers/json';
import { AWS_FLAGS, cli, pooledMotoCluster, startWorld, stateFile, stopWorld, World, writeCluster } from './harness';

// Issue 33, finding 1, end to end as it was found: the reconciler (the real CLI, file store) against moto (the
// wrapper, each stack held in progress for a while as in AWS) with a cluster of two pools, `default` in the shared
// stack and `spot` in its own. A new machine image in both pools in one edit keeps every config checksum, yet replaces
// both pools' nodes: with spec.rollout.maxConcurrentPools 1 (the default) one pool's stack updates while the other
// waits, never both at once, and each says why it rolls (its roll key's cause: image).

const NAME = 'moto-pool-rolls';
const SHARED = workerStackName(NAME);
const SPOT = poolStackName(NAME, 'spot');
let world: World;

beforeAll(async () => {
  world = await startWorld({ inProgressSeconds: 3 });
}, 120_000);
afterAll(() => stopWorld(world));

/** The stack's last update, from its own events: when it went UPDATE_IN_PROGRESS and when it ended (ms). */
async function lastUpdate(stackName: string): Promise<{ from: number; to: number }> {
  const r = await world.cfn.send(new DescribeStackEventsCommand({ StackName: stackName }));
  const own = (r.StackEvents ?? [])
    .filter((e: StackEvent) => e.LogicalResourceId === stackName && e.ResourceType === 'AWS::CloudFormation::Stack')
    .map((e) => ({ status: e.ResourceStatus ?? '', at: e.Timestamp?.getTime() ?? 0 }))
    .sort((a, b) => a.at - b.at);
  const from = own.filter((e) => e.status === 'UPDATE_IN_PROGRESS').pop();
  const to = own.filter((e) => from && e.at >= from.at && e.status === 'UPDATE_COMPLETE').shift();
  if (!from || !to) throw new Error(`${stackName} has no completed update: ${JSON.stringify(own)}`);
  return { from: from.at, to: to.at };
}

test('a new image in both pools: one pool replaces its nodes at a time (maxConcurrentPools 1), each saying why', async () => {
  // GIVEN a cluster of two pools, created
  const images: string[] = world.moto.python(
    `out = [i['ImageId'] for i in ec2.describe_images(Owners=['amazon'])['Images'][:2]]`,
    null,
  );
  expect(images[1]).toBeDefined();
  writeCluster(world, pooledMotoCluster(world, NAME));
  const created = await cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);
  expect(created.code).toBe(0);
  const before = stateFile(world, NAME).status;

  // WHEN both pools get another machine image in one edit (no config checksum changes)
  const newImage = images.find((i) => i !== world.net.ami)!;
  writeCluster(
    world,
    pooledMotoCluster(world, NAME, 'spot', (raw) => {
      for (const p of raw.spec.pools as Json[]) p.machineImage = newImage;
    }),
  );
  const rolled = await cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);

  // THEN both stacks were updated, one after the other
  expect(rolled.code).toBe(0);
  const shared = await lastUpdate(SHARED);
  const spot = await lastUpdate(SPOT);
  const overlap = Math.min(shared.to, spot.to) - Math.max(shared.from, spot.from);
  expect({ overlapMs: overlap > 0 ? overlap : 0 }).toEqual({ overlapMs: 0 });
  // and the config checksums did not change: the roll key, not the checksum, said these replace nodes
  const after = stateFile(world, NAME).status;
  expect(after.cloudConfigChecksum).toBe(before.cloudConfigChecksum);
  expect(after.rollKey).not.toBe(before.rollKey);
  expect(after.pendingRoll).toBeUndefined();
  const lines = rolled.logs.split('\n').filter((l) => l.startsWith('{'));
  const msgs = lines.map((l) => JSON.parse(l) as { msg?: string; pool?: string });
  expect(msgs.some((m) => /rolling the nodes \(image\)/.test(m.msg ?? ''))).toBe(true);
  expect(msgs.some((m) => m.pool === 'spot' && /waiting to replace nodes \(image\)/.test(m.msg ?? ''))).toBe(true);
  expect(msgs.filter((m) => /no node is replaced/.test(m.msg ?? ''))).toEqual([]);
}, 300_000);
