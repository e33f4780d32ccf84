import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { getCondition } from '../../lib/model/cluster/schema/status';
import { workerStackName } from '../../lib/core/naming';
import { REPO } from '../helpers/clusters';
import { freePort } from '../helpers/moto';
import { AWS_FLAGS, cli, motoCluster, startWorld, stateFile, stopWorld, World, writeCluster } from './harness';

// Issue 25, items 1 and 13, as the trial found them: the daemon (the real binary) against the moto wrapper, whose stacks
// stay UPDATE_IN_PROGRESS for a few seconds. A spec change that keeps the node config (pool.maxSize) must not be
// recorded Ready from the first pass's listing, taken before the daemon's own ExecuteChangeSet, when an event (the
// same file saved again) brings the cluster back within the listing's poll interval (20 s here).

const NAME = 'own-write';
let world: World;
let daemon: ChildProcess | undefined;
let logs = '';
const exited = () =>
  new Promise<number | null>((resolve) =>
    daemon!.exitCode !== null ? resolve(daemon!.exitCode) : daemon!.once('exit', (code) => resolve(code)),
  );

beforeAll(async () => {
  world = await startWorld({ inProgressSeconds: 4 });
}, 120_000);
afterAll(async () => {
  if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
    daemon.kill('SIGKILL');
    await exited();
  }
  await stopWorld(world);
});

/** The stack's status and its last UPDATE_COMPLETE event's time, as moto has them now. */
function stackNow(): { status: string; updateCompleteAt?: number } {
  return world.moto.python<{ status: string; updateCompleteAt?: number }>(
    `
s = cfn.describe_stacks(StackName=args)['Stacks'][0]
events = cfn.describe_stack_events(StackName=args)['StackEvents']
done = [e['Timestamp'].timestamp() * 1000 for e in events if e['LogicalResourceId'] == args and e['ResourceStatus'] == 'UPDATE_COMPLETE']
out = dict(status=s['StackStatus'], updateCompleteAt=max(done) if done else None)
`,
    workerStackName(NAME),
  );
}

test('the daemon records Ready for a spec change only after CloudFormation completed it', async () => {
  // GIVEN a Ready cluster, then (the daemon stopped) an edit of pool.maxSize, which keeps the node config
  writeCluster(world, motoCluster(world, NAME));
  const created = await cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);
  expect(created.code).toBe(0);
  writeCluster(
    world,
    motoCluster(world, NAME, (raw) => (raw.spec.pool.maxSize = 5)),
  );

  // WHEN the daemon starts, and the status is looked at every 50 ms until it is Ready for generation 2
  daemon = spawn(
    process.execPath,
    [
      path.join(REPO, 'bin', 'worker-stacks.js'),
      'reconcile',
      '--watch',
      '--port',
      String(await freePort()),
      '--clusters',
      world.dir,
      ...AWS_FLAGS,
      '--poll-seconds',
      '20',
    ],
    { cwd: REPO, env: { ...process.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  daemon.stdout!.on('data', (d) => (logs += String(d)));
  daemon.stderr!.on('data', (d) => (logs += String(d)));
  const deadline = Date.now() + 90_000;
  let seen: { status: string; updateCompleteAt?: number } | undefined;
  let readyAt = 0;
  let savedAgain = false;
  while (Date.now() < deadline && daemon.exitCode === null) {
    // AND the same file is saved again (an editor, a git pull) right after the daemon executed the change set
    if (!savedAgain && /"result":"waiting"/.test(logs)) {
      writeCluster(
        world,
        motoCluster(world, NAME, (raw) => (raw.spec.pool.maxSize = 5)),
      );
      savedAgain = true;
    }
    const status = stateFile(world, NAME).status;
    const ready = getCondition(status, 'Ready');
    if (ready?.status === 'True' && ready.observedGeneration === 2) {
      readyAt = Date.parse(ready.lastTransitionTime);
      seen = stackNow();
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  // THEN when it was Ready, the stack had completed the update, and before Ready was recorded
  if (!seen)
    throw new Error(`never Ready for generation 2 (daemon exit ${daemon.exitCode}); its log:\n${logs.slice(-3000)}`);
  expect(seen.status).toBe('UPDATE_COMPLETE');
  expect(seen.updateCompleteAt).toBeDefined();
  expect(readyAt).toBeGreaterThanOrEqual(Math.floor(seen.updateCompleteAt!) - 1);
  // The log line follows the status write: give the daemon's stdout a moment to reach us (a loaded machine).
  for (const until = Date.now() + 15_000; !logs.includes('stack applied') && Date.now() < until;)
    await new Promise((r) => setTimeout(r, 50));
  expect({ applied: logs.match(/"msg":"stack applied; live checksum recorded"/g)?.length, logs: '' }).toEqual({
    applied: 1,
    logs: logs.includes('stack applied') ? '' : logs.slice(-4000),
  });

  daemon.kill('SIGTERM');
  expect(await exited()).toBe(0);
}, 180_000);
