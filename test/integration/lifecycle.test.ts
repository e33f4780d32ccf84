import { problem } from '../fakes/harness';
import { createHash } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { getCondition } from '../../lib/model/cluster/schema/status';
import { workerStackName } from '../../lib/core/naming';
import {
  AWS_FLAGS,
  bucketVersions,
  cli,
  launchTemplateUserData,
  motoCluster,
  stackActivity,
  startWorld,
  stateFile,
  stopWorld,
  World,
  writeCluster,
} from './harness';
import { Json } from '../helpers/json';

// Against moto: create from nothing, a second pass that changes nothing, then a config change that rolls.
// The tests run in order and each starts from the state the previous one left (like a real fleet does).

const NAME = 'moto-life';
const STACK = workerStackName(NAME);
let world: World;
const reconcile = () => cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);

beforeAll(async () => {
  world = await startWorld();
}, 120_000);
afterAll(() => stopWorld(world));

describe('a cluster against moto', () => {
  let created: string;

  test('is created from nothing: checksum, observedGeneration 1 and Ready=True recorded, config object at its checksum key, user data embeds it', async () => {
    // GIVEN a new cluster object and no stack
    writeCluster(world, motoCluster(world, NAME));

    // WHEN one pass runs
    const run = await reconcile();

    // THEN the stack exists and the status records what is live
    expect(run.code).toBe(0);
    expect(run.out).toBe(`${NAME}\tapplied\n`);
    const { status, generation } = stateFile(world, NAME);
    created = status.cloudConfigChecksum;
    expect(created).toMatch(/^[0-9a-f]{64}$/);
    expect(generation).toBe(1);
    expect(status.observedGeneration).toBe(1);
    expect(status.stackStatus).toBe('CREATE_COMPLETE');
    expect(getCondition(status, 'Ready')).toMatchObject({ status: 'True', reason: 'StackCreated' });
    expect(problem(status)).toMatchObject({ status: 'False' });

    // AND the config object is in S3 under the cluster's prefix at its checksum, with those exact bytes
    const key = `clusters/${NAME}/${created}.yaml`;
    const obj = await world.s3.send(new GetObjectCommand({ Bucket: world.bucket, Key: key }));
    const bytes = Buffer.from(await obj.Body!.transformToByteArray());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(created);

    // AND `render` prints the same bytes
    const render = await cli(['render', NAME, '--clusters', world.dir]);
    expect(render.code).toBe(0);
    expect(render.out).toBe(bytes.toString('utf8'));

    // AND the launch template's user data carries the checksum
    const versions = launchTemplateUserData(world, STACK);
    expect(versions).toHaveLength(1);
    expect(versions[0].userData).toContain(created);
  });

  // The second pass is run once; its effect on the status file is checked in the next test.
  let statusBefore: Json;
  let statusAfter: Json;

  test('a second pass with nothing changed executes no change set and writes nothing to S3', async () => {
    // GIVEN the created cluster, and what S3, the stack and the status file hold now
    const objects = await bucketVersions(world);
    const activity = await stackActivity(world, STACK);
    statusBefore = stateFile(world, NAME);

    // WHEN another pass runs
    const run = await reconcile();
    statusAfter = stateFile(world, NAME);

    // THEN it is unchanged: nothing synthesized, published or deployed
    expect(run.code).toBe(0);
    expect(run.out).toBe(`${NAME}\tunchanged\n`);
    expect(run.logs).not.toMatch(/assets published|rolling the nodes/);
    expect(await bucketVersions(world)).toEqual(objects);
    expect(await stackActivity(world, STACK)).toEqual(activity);
  });

  test('that second pass did not write the status either (same resourceVersion, same conditions)', () => {
    // GIVEN the status file before and after the second pass (previous test)
    // WHEN they are compared
    // THEN nothing was written
    expect(statusAfter?.resourceVersion).toBe(statusBefore?.resourceVersion);
    expect(statusAfter).toEqual(statusBefore);
  });

  test('a config change makes a change set that moves the user data to the new checksum, recorded with what changed', async () => {
    // GIVEN the same cluster with another maxPods (a kubelet config value)
    writeCluster(
      world,
      motoCluster(world, NAME, (raw) => (raw.spec.cloudConfig.values.maxPods = 61)),
    );
    const setsBefore = (await stackActivity(world, STACK)).changeSets;

    // WHEN one pass runs
    const run = await reconcile();

    // THEN the stack was updated through a new change set, and a new checksum is recorded for generation 2
    expect(run.code).toBe(0);
    expect(run.out).toBe(`${NAME}\tapplied\n`);
    const { status, generation } = stateFile(world, NAME);
    const updated = status.cloudConfigChecksum;
    expect(updated).toMatch(/^[0-9a-f]{64}$/);
    expect(updated).not.toBe(created);
    expect(generation).toBe(2);
    expect(status.observedGeneration).toBe(2);
    expect(status.stackStatus).toBe('UPDATE_COMPLETE');
    expect(getCondition(status, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'StackUpdated',
      observedGeneration: 2,
    });
    const activity = await stackActivity(world, STACK);
    expect(activity.changeSets.filter((s) => !setsBefore.includes(s))).toEqual([
      expect.stringMatching(/^ws-[0-9a-f]{24}-[0-9a-f]{8}:EXECUTE_COMPLETE$/),
    ]);

    // AND the status and the log name the file that changed, not only the hashes
    expect(status.lastConfigChange).toBe('changed /var/lib/kubelet/config.yaml');
    expect(run.logs).toContain(
      `rolling the nodes to config ${updated.slice(0, 12)}: changed /var/lib/kubelet/config.yaml`,
    );

    // AND the launch template has a new version whose user data carries the new checksum (and not the old one)
    const versions = launchTemplateUserData(world, STACK);
    expect(versions).toHaveLength(2);
    expect(versions[1].userData).toContain(updated);
    expect(versions[1].userData).not.toContain(created);

    // AND both config objects are in S3: the old one stays for nodes not yet rolled
    const listed = await world.s3.send(new ListObjectsV2Command({ Bucket: world.bucket, Prefix: `clusters/${NAME}/` }));
    expect((listed.Contents ?? []).map((o) => o.Key).sort()).toEqual(
      [`clusters/${NAME}/${created}.yaml`, `clusters/${NAME}/${updated}.yaml`].sort(),
    );
  });
});
