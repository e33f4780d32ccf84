import { getCondition } from '../../lib/model/cluster/schema/status';
import { workerStackName } from '../../lib/core/naming';
import { AWS_FLAGS, cli, motoCluster, stackOf, startWorld, stateFile, stopWorld, World, writeCluster } from './harness';

// The live stack is the truth, shown on moto: a stack changed behind the reconciler's back is detected and re-applied,
// and a stack deleted behind its back is said to be gone and created again. Each test starts from a cluster of its own.
// On the project's wrapper (tools/moto/server.py): plain moto keeps a stack's outputs of before a change set was
// executed, so a re-applied stack would still report the out-of-band checksum.

let world: World;
const reconcile = () => cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);

beforeAll(async () => {
  world = await startWorld({ inProgressSeconds: 0 });
}, 120_000);
afterAll(() => stopWorld(world));

/** A cluster created and Ready, with the checksum its stack carries. */
async function readyCluster(name: string): Promise<string> {
  writeCluster(world, motoCluster(world, name));
  const run = await reconcile();
  if (run.code !== 0) throw new Error(`create of ${name} failed: ${run.out}${run.logs}`);
  return stateFile(world, name).status.cloudConfigChecksum as string;
}

/** The ConfigChecksum the live stack's template carries (moto leaves the outputs of change-set stacks out). */
function liveChecksum(stackName: string): string {
  return world.moto.python<string>(
    `
body = cfn.get_template(StackName=args)['TemplateBody']
out = (body if isinstance(body, dict) else json.loads(body))['Outputs']['ConfigChecksum']['Value']
`,
    stackName,
  );
}

test('a stack updated outside worker-stacks is reported as Drifted and re-applied with the object’s config', async () => {
  // GIVEN a Ready cluster, and someone who updates its stack by hand with another node config checksum
  const name = 'drift-1';
  const applied = await readyCluster(name);
  const other = 'c'.repeat(64);
  world.moto.python(
    `
body = cfn.get_template(StackName=args['stack'])['TemplateBody']
t = body if isinstance(body, dict) else json.loads(body)
t['Outputs']['ConfigChecksum']['Value'] = args['other']
cfn.update_stack(StackName=args['stack'], TemplateBody=json.dumps(t), Capabilities=['CAPABILITY_IAM', 'CAPABILITY_NAMED_IAM'])
out = True
`,
    { stack: workerStackName(name), other },
  );
  expect(liveChecksum(workerStackName(name))).toBe(other);

  // WHEN the reconciler runs
  const run = await reconcile();

  // THEN it said what it found (both checksums), re-applied the object, and the stack carries the object's config again
  expect(run.code).toBe(0);
  const drifted = run.logs.split('\n').find((l) => l.includes('"reason":"Drifted"'));
  expect(drifted).toBeDefined();
  expect(JSON.parse(drifted!)).toMatchObject({
    recordedChecksum: applied,
    stackChecksum: other,
    desiredChecksum: applied,
  });
  expect(liveChecksum(workerStackName(name))).toBe(applied);
  const { status } = stateFile(world, name);
  expect(status.cloudConfigChecksum).toBe(applied);
  expect(getCondition(status, 'Ready')).toMatchObject({ status: 'True' });
});

test('a stack deleted outside worker-stacks is reported gone (StackDeleted), then created again', async () => {
  // GIVEN a Ready cluster whose stack someone deletes
  const name = 'vanish-1';
  const applied = await readyCluster(name);
  const firstId = stateFile(world, name).status.stackId as string;
  world.moto.python(`cfn.delete_stack(StackName=args)\nout = True`, workerStackName(name));
  expect(await stackOf(world, workerStackName(name))).toBeUndefined();

  // WHEN the reconciler runs
  const run = await reconcile();

  // THEN it said the stack was gone, and created a new one carrying the object's config
  expect(run.code).toBe(0);
  expect(run.logs).toMatch(/"reason":"StackDeleted"/);
  const stack = await stackOf(world, workerStackName(name));
  expect(stack?.StackStatus).toBe('CREATE_COMPLETE');
  expect(stack?.StackId).not.toBe(firstId);
  const { status } = stateFile(world, name);
  expect(status).toMatchObject({ cloudConfigChecksum: applied, stackId: stack!.StackId });
  expect(getCondition(status, 'Ready')).toMatchObject({ status: 'True', reason: 'StackCreated' });
});

test('the same out-of-band update made twice is repaired twice (moto reports no LastUpdatedTime)', async () => {
  // GIVEN a Ready cluster
  const name = 'drift-twice';
  const applied = await readyCluster(name);
  const update = () =>
    world.moto.python(
      `
body = cfn.get_template(StackName=args['stack'])['TemplateBody']
t = body if isinstance(body, dict) else json.loads(body)
t['Outputs']['ConfigChecksum']['Value'] = args['other']
cfn.update_stack(StackName=args['stack'], TemplateBody=json.dumps(t), Capabilities=['CAPABILITY_IAM', 'CAPABILITY_NAMED_IAM'])
out = True
`,
      { stack: workerStackName(name), other: 'd'.repeat(64) },
    );

  for (const time of ['first', 'second']) {
    // WHEN the same out-of-band update is made, and the reconciler runs
    update();
    expect(liveChecksum(workerStackName(name))).toBe('d'.repeat(64));
    const run = await reconcile();

    // THEN the object's config is live again, and the cluster Ready on it
    expect([time, run.code]).toEqual([time, 0]);
    expect(liveChecksum(workerStackName(name))).toBe(applied);
    const { status } = stateFile(world, name);
    expect(status.cloudConfigChecksum).toBe(applied);
    expect(getCondition(status, 'Ready')).toMatchObject({ status: 'True' });
  }
});
