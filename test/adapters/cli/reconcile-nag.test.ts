import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { getCondition } from '../../../lib/model/cluster/schema/status';
import { REPO } from '../../helpers/clusters';
import {
  AWS_FLAGS,
  motoCluster,
  startWorld,
  stateFile,
  stopWorld,
  World,
  writeCluster,
} from '../../integration/harness';

/**
 * The daemon as it runs (`worker-stacks reconcile --watch`, a child process, NODE_ENV unset as in production, synthesis
 * in its worker threads) meets an object cdk-nag refuses: its stdout and stderr carry JSON lines only (no
 * `ERROR ... AwsSolutions-EC23` block from aws-cdk-lib), and the recorded condition names the rule, the field and the
 * fix, as `worker-stacks validate` does.
 */

let world: World;
let daemon: ChildProcess | undefined;
let stdout = '';
let stderr = '';

beforeAll(async () => {
  world = await startWorld();
}, 120_000);
afterAll(async () => {
  if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
    daemon.kill('SIGKILL');
    await new Promise((r) => daemon!.once('exit', r));
  }
  await stopWorld(world);
});

const stalled = (name: string) => {
  try {
    return getCondition(stateFile(world, name).status, 'Stalled');
  } catch {
    return undefined; // no status yet
  }
};

test.each([
  { threads: '2', how: 'in synthesis threads (the default)', name: 'nag-threads' },
  { threads: '0', how: 'in the main thread', name: 'nag-main' },
])(
  'a cdk-nag finding, synthesized $how: JSON log lines only, and a condition that names the rule, the field and the fix',
  async ({ threads, name }) => {
    // GIVEN an object with SSH open to the world as its last rule
    stdout = '';
    stderr = '';
    let index = -1;
    writeCluster(
      world,
      motoCluster(
        world,
        name,
        (raw) =>
          (index =
            raw.spec.securityGroupRules.push({
              description: 'https from anywhere',
              protocol: 'tcp',
              port: 8443,
              source: { cidr: '0.0.0.0/0' },
            }) - 1),
      ),
    );
    const field = `spec.securityGroupRules[${index}]`.replace(/[.[\]]/g, (c) => `\\${c}`);
    const env = { ...process.env };
    delete env.NODE_ENV; // jest's; aws-cdk-lib reports differently under it
    delete env.CDK_APP_MODE;

    // WHEN the daemon reconciles it
    daemon = spawn(
      process.execPath,
      [
        path.join(REPO, 'bin', 'worker-stacks.js'),
        'reconcile',
        '--watch',
        '--synth-threads',
        threads,
        '--clusters',
        world.dir,
        ...AWS_FLAGS,
      ],
      { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    daemon.stdout!.on('data', (d) => (stdout += String(d)));
    daemon.stderr!.on('data', (d) => (stderr += String(d)));
    const deadline = Date.now() + 90_000;
    while (!stalled(name) && Date.now() < deadline && daemon.exitCode === null)
      await new Promise((r) => setTimeout(r, 200));
    daemon.kill('SIGTERM');
    const code = await new Promise<number | null>((r) =>
      daemon!.exitCode !== null ? r(daemon!.exitCode) : daemon!.once('exit', r),
    );

    // THEN the cluster is Stalled with SynthesisFailed, and the message says which rule, which field, and what to do
    expect(code).toBe(0); // a clean stop on SIGTERM (the daemon is still up: it does not end by itself after a pass)
    const condition = stalled(name);
    expect(condition).toMatchObject({ status: 'True', reason: 'SynthesisFailed' });
    expect(condition!.message).toMatch(new RegExp(`WorkerStack-${name} did not synthesize`));
    expect(condition!.message).toMatch(new RegExp(`${field}: cdk-nag AwsSolutions-EC23: `));
    expect(condition!.message).toMatch(new RegExp(`fix: narrow ${field}\\.source to the networks that need it`));

    // AND every line the daemon wrote, on stdout and stderr, is a JSON object; the failure is logged as one of them
    const lines = `${stdout}${stderr}`.split('\n').filter((l) => l !== '');
    const notJson = lines.filter((l) => {
      try {
        return typeof JSON.parse(l) !== 'object';
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    const failure = lines.map((l) => JSON.parse(l)).find((l) => l.cluster === name && l.reason === 'SynthesisFailed');
    expect(failure?.msg).toMatch(new RegExp(`${field}: cdk-nag AwsSolutions-EC23`));
  },
  150_000,
);
