import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { getCondition } from '../../lib/model/cluster/schema/status';
import { renderCluster } from '../../lib/model/cluster/derive';
import { validateCluster } from '../../lib/model/cluster/validate';
import { listTemplates } from '../../lib/model/cloudconfig/templates';
import { workerStackName } from '../../lib/core/naming';
import { REPO } from '../helpers/clusters';
import { freePort } from '../helpers/moto';
import { AWS_FLAGS, cli, motoCluster, startWorld, stateFile, stopWorld, World, writeCluster } from './harness';
import { defaultTemplates } from '../../lib/platform/files/template-directory';

// Issue 25, bug 8, as the trial found it: the daemon (the real binary, file store) against the moto wrapper, whose
// stacks stay UPDATE_IN_PROGRESS for a few seconds, with --max-update-attempts 1. Two edits of the node config 0.3 s
// apart: a listing older than the daemon's own execute must not record the first change set as done, so the second is
// never executed into the running stack (CloudFormation's refusal would be counted as a failure, and with one attempt
// the cluster would stall); the cluster ends Ready on the second edit's checksum.

const NAME = 'two-edits';
let world: World;
let daemon: ChildProcess | undefined;
let logs = '';
const exited = () =>
  new Promise<number | null>((resolve) =>
    daemon?.exitCode !== null ? resolve(daemon?.exitCode ?? null) : daemon.once('exit', (code) => resolve(code)),
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the raw object as the harness builds it
const withMaxPods = (n: number) => motoCluster(world, NAME, (raw: any) => (raw.spec.cloudConfig.values.maxPods = n));

/** The checksum the object renders to, as the reconciler derives it. */
function checksumOf(raw: unknown): string {
  const v = validateCluster(raw, { file: NAME, templates: listTemplates(defaultTemplates()) });
  if (!('cluster' in v) || !v.cluster) throw new Error(`invalid: ${JSON.stringify(v.problems)}`);
  const r = renderCluster(v.cluster, NAME, defaultTemplates());
  if (!('config' in r)) throw new Error(`does not render: ${JSON.stringify(r.problems)}`);
  return r.config.checksum;
}

/** The stack's operations as moto's events have them, oldest first: each start ("User Initiated") and each end. */
function operations(): string[] {
  return world.moto.python<string[]>(
    `
events = sorted(cfn.describe_stack_events(StackName=args)['StackEvents'], key=lambda e: e['Timestamp'])
out = [e['ResourceStatus'] for e in events if e['LogicalResourceId'] == args and e['ResourceStatus'] in ('CREATE_IN_PROGRESS', 'UPDATE_IN_PROGRESS', 'CREATE_COMPLETE', 'UPDATE_COMPLETE', 'UPDATE_ROLLBACK_IN_PROGRESS')]
`,
    workerStackName(NAME),
  );
}

test('two edits 0.3 s apart: the second waits for the first, nothing is counted as a failure, Ready on the second checksum', async () => {
  // GIVEN a Ready cluster, and the daemon running with --max-update-attempts 1 (its first pass done)
  writeCluster(world, withMaxPods(100));
  const created = await cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);
  expect(created.code).toBe(0);
  const args = [
    'reconcile',
    '--watch',
    '--port',
    String(await freePort()),
    '--clusters',
    world.dir,
    ...AWS_FLAGS,
    '--poll-seconds',
    '20',
    '--max-update-attempts',
    '1',
  ];
  daemon = spawn(process.execPath, [path.join(REPO, 'bin', 'worker-stacks.js'), ...args], {
    cwd: REPO,
    env: { ...process.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  daemon.stdout?.on('data', (d) => (logs += String(d)));
  daemon.stderr?.on('data', (d) => (logs += String(d)));
  for (
    const until = Date.now() + 60_000;
    !/"result":"unchanged"/.test(logs) && daemon.exitCode === null && Date.now() < until;
  )
    await sleep(50);
  expect({ started: /"result":"unchanged"/.test(logs), logs: '' }).toEqual({
    started: true,
    logs: /"result":"unchanged"/.test(logs) ? '' : logs.slice(-3000),
  });

  // WHEN the node config is edited, and edited again 0.3 s later
  writeCluster(world, withMaxPods(110));
  await sleep(300);
  const second = withMaxPods(111);
  writeCluster(world, second);

  // THEN (looking at the status every 100 ms) the cluster becomes Ready for the second edit, and never stalls
  const deadline = Date.now() + 120_000;
  let status = stateFile(world, NAME).status;
  while (Date.now() < deadline && daemon.exitCode === null) {
    status = stateFile(world, NAME).status;
    const ready = getCondition(status, 'Ready');
    if (
      getCondition(status, 'Stalled')?.status === 'True' ||
      (ready?.status === 'True' && ready.observedGeneration === 3)
    )
      break;
    await sleep(100);
  }
  const brief = {
    stalled: getCondition(status, 'Stalled')?.status,
    ready: getCondition(status, 'Ready')?.status,
    generation: getCondition(status, 'Ready')?.observedGeneration,
    failures: status.controller?.failures ?? 0,
  };
  const want = { stalled: 'False', ready: 'True', generation: 3, failures: 0 };
  expect({ ...brief, log: JSON.stringify(brief) === JSON.stringify(want) ? '' : logs.slice(-4000) }).toEqual({
    ...want,
    log: '',
  });
  expect(status.cloudConfigChecksum).toBe(checksumOf(second));

  // AND no change set was refused for a stack in progress, nothing failed, and each update started after the one before ended
  expect({ refused: /can not be updated|"result":"failed"/.test(logs), log: '' }).toEqual({ refused: false, log: '' });
  expect(operations()).toEqual([
    'CREATE_IN_PROGRESS',
    'CREATE_COMPLETE',
    'UPDATE_IN_PROGRESS',
    'UPDATE_COMPLETE',
    'UPDATE_IN_PROGRESS',
    'UPDATE_COMPLETE',
  ]);

  daemon.kill('SIGTERM');
  expect(await exited()).toBe(0);
}, 240_000);
