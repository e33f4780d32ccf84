import { problem } from '../fakes/harness';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { getCondition } from '../../lib/model/cluster/schema/status';
import { workerStackName } from '../../lib/core/naming';
import { MOTO_ACCOUNT, MOTO_REGION } from '../helpers/moto';
import {
  AWS_FLAGS,
  bucketVersions,
  cli,
  motoCluster,
  stackActivity,
  stackOf,
  startWorld,
  stateFile,
  stopWorld,
  World,
  writeCluster,
} from './harness';

// Against moto: an invalid object, `status -o json`, `reconcile --dry-run` and `delete`.

let world: World;
beforeAll(async () => {
  world = await startWorld();
}, 120_000);
afterAll(() => stopWorld(world));

const stackNames = async () =>
  ((await world.cfn.send(new DescribeStacksCommand({}))).Stacks ?? [])
    .map((s) => `${s.StackName}:${s.StackStatus}`)
    .sort();
const keysUnder = async (prefix: string) =>
  ((await world.s3.send(new ListObjectsV2Command({ Bucket: world.bucket, Prefix: prefix }))).Contents ?? []).map(
    (o) => o.Key,
  );
const statusJson = async () => {
  const r = await cli(['status', '-o', 'json', '--clusters', world.dir]);
  expect(r.code).toBe(0);
  return JSON.parse(r.out).clusters as Array<Record<string, unknown>>;
};

test('an invalid object touches nothing in AWS: no stack, no S3 object, exit 1, status Failed with reason InvalidSpec', async () => {
  // GIVEN an object whose pool cannot exist (minSize above maxSize), and what AWS holds now
  writeCluster(
    world,
    motoCluster(world, 'moto-bad', (raw) => (raw.spec.pool.minSize = 9)),
  );
  const stacks = await stackNames();
  const objects = await bucketVersions(world);

  // WHEN one pass runs over it
  const run = await cli(['reconcile', '--once', '--cluster', 'moto-bad', '--clusters', world.dir, ...AWS_FLAGS]);

  // THEN it fails with exit code 1, naming the field
  expect(run.code).toBe(1);
  expect(run.out).toMatch(/^moto-bad\tinvalid\t.*spec\.pool/);

  // AND AWS is as it was: no stack for it, no config object, no other write
  expect(await stackOf(world, workerStackName('moto-bad'))).toBeUndefined();
  expect(await stackNames()).toEqual(stacks);
  expect(await keysUnder('clusters/moto-bad/')).toEqual([]);
  expect(await bucketVersions(world)).toEqual(objects);

  // AND the status says why, without a checksum
  const { status } = stateFile(world, 'moto-bad');
  expect(problem(status)).toMatchObject({ status: 'True', reason: 'InvalidSpec' });
  expect(getCondition(status, 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
  expect(status.cloudConfigChecksum).toBeUndefined();
});

describe('status, dry run and delete of a live cluster', () => {
  const NAME = 'moto-ops';
  const STACK = workerStackName(NAME);
  const row = async () => (await statusJson()).find((r) => r.cluster === NAME)!;

  beforeAll(async () => {
    writeCluster(world, motoCluster(world, NAME));
    const run = await cli(['reconcile', '--once', '--cluster', NAME, '--clusters', world.dir, ...AWS_FLAGS]);
    if (run.code !== 0) throw new Error(`create failed: ${run.out}${run.logs}`);
  }, 120_000);

  test('`status -o json` shows desired and live checksum in sync and Ready', async () => {
    // GIVEN the created cluster
    const live = stateFile(world, NAME).status.cloudConfigChecksum;

    // WHEN the status is read as JSON
    const r = await row();

    // THEN desired equals live, and it is Ready
    expect(r).toMatchObject({
      cluster: NAME,
      generation: 1,
      observedGeneration: 1,
      desiredChecksum: live,
      liveChecksum: live,
      inSync: true,
      stack: STACK,
      stackStatus: 'CREATE_COMPLETE',
      ready: 'True',
    });
  });

  test('after a config change, `status` shows desired != live, and `reconcile --dry-run` says it would roll and changes nothing', async () => {
    // GIVEN a config change not yet applied
    const live = stateFile(world, NAME).status.cloudConfigChecksum as string;
    writeCluster(
      world,
      motoCluster(world, NAME, (raw) => (raw.spec.cloudConfig.values.maxPods = 40)),
    );

    // WHEN the status is read
    const r = await row();

    // THEN the desired checksum differs from the live one, for generation 2 not yet observed
    expect(r).toMatchObject({ generation: 2, observedGeneration: 1, liveChecksum: live, inSync: false, ready: 'True' });
    const desired = r.desiredChecksum as string;
    expect(desired).toMatch(/^[0-9a-f]{64}$/);
    expect(desired).not.toBe(live);

    // GIVEN what AWS and the status file hold now
    const activity = await stackActivity(world, STACK);
    const objects = await bucketVersions(world);
    const state = stateFile(world, NAME);

    // WHEN a dry run goes over it
    const dry = await cli([
      'reconcile',
      '--once',
      '--dry-run',
      '--cluster',
      NAME,
      '--clusters',
      world.dir,
      ...AWS_FLAGS,
    ]);

    // THEN it says it would update and roll, from which config to which, and why
    expect(dry.code).toBe(0);
    expect(dry.out).toBe(
      `${NAME}\tdry-run\twould update the stack and replace the nodes (config): config ${live.slice(0, 12)} -> ${desired.slice(0, 12)} (changed /var/lib/kubelet/config.yaml)\n`,
    );

    // AND nothing changed: no change set, no stack update, no S3 object, no status write
    expect(await stackActivity(world, STACK)).toEqual(activity);
    expect(await bucketVersions(world)).toEqual(objects);
    expect(stateFile(world, NAME)).toEqual(state);
  });

  test('`delete <name>` needs --yes and the object gone (or --force), then deletes the stack, waits, and clears the status', async () => {
    // GIVEN the live stack
    expect((await stackOf(world, STACK))?.StackStatus).toMatch(/_COMPLETE$/);

    // WHEN delete runs without --yes
    const refused = await cli(['delete', NAME, '--clusters', world.dir, ...AWS_FLAGS]);

    // THEN it refuses (usage) and the stack stays
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('--yes');
    expect((await stackOf(world, STACK))?.StackStatus).toMatch(/_COMPLETE$/);

    // WHEN it runs with --yes while the object still exists
    const stillThere = await cli(['delete', NAME, '--yes', '--clusters', world.dir, ...AWS_FLAGS]);

    // THEN it refuses too: the next reconcile would only create the stack again
    expect(stillThere.code).toBe(2);
    expect(stillThere.err).toMatch(new RegExp(`${NAME}\\.yaml still exists.*--force`));
    expect((await stackOf(world, STACK))?.StackStatus).toMatch(/_COMPLETE$/);

    // WHEN the object is removed and delete runs with --yes and the region
    fs.rmSync(path.join(world.dir, `${NAME}.yaml`));
    const run = await cli(['delete', NAME, '--yes', '--region', MOTO_REGION, '--clusters', world.dir, ...AWS_FLAGS]);

    // THEN the stack is gone, the status cleared, and `status` no longer lists the cluster
    expect(run.code).toBe(0);
    // (and, the stack gone, its config objects in the bucket)
    expect(run.out).toMatch(
      new RegExp(`^${NAME}\\tdeleted \\d+ config objects? from s3://\\S+/clusters/${NAME}/\\n${STACK}\\tdeleted\\n$`),
    );
    expect(run.err).not.toContain('warning');
    const after = await stackOf(world, STACK);
    expect(after === undefined || after.StackStatus === 'DELETE_COMPLETE').toBe(true);
    expect(stateFile(world, NAME).status).toBeUndefined();
    expect((await statusJson()).map((r) => r.cluster)).not.toContain(NAME);
  });
});

test('`bootstrap` again is a no-op: same bucket, no new stack operation', async () => {
  // GIVEN the bootstrap stack the world deployed, and its activity so far
  const name = 'WorkerStacks-Bootstrap';
  const before = await stackActivity(world, name);

  // WHEN bootstrap runs a second time
  const run = await cli(['bootstrap', '--region', MOTO_REGION, '--clusters', world.dir, ...AWS_FLAGS]);

  // THEN it reports the same complete stack and bucket, and CloudFormation did nothing new
  expect(run.code).toBe(0);
  expect(run.out).toBe(`${MOTO_ACCOUNT}/${MOTO_REGION}\t${name}\tCREATE_COMPLETE\t${world.bucket}\n`);
  expect(await stackActivity(world, name)).toEqual(before);
});
