import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getCondition } from '../../../lib/model/cluster/schema/status';
import { MISSING_IMAGE } from '../../../lib/adapters/playground/steps';
import { EXAMPLE_NAMES, rawExample, REPO } from '../../helpers/clusters';
import { Json } from '../../helpers/json';

// The playground end to end, as `npm run playground` runs it but with the fixed script of steps instead of a
// prompt: moto (tools/moto/server.py), the repository's own examples, bootstrap, the daemon; a template edit; a
// broken image. Every report carries `status -o json`'s rows and the stacks as moto lists them.

interface Row {
  cluster: string;
  ready: string;
  inSync: boolean;
  liveChecksum?: string;
  desiredChecksum?: string;
  stackStatus?: string;
  reason?: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the whole status, as stored
  status?: any;
}
interface Report {
  step: string;
  changed?: Json;
  clusters?: Row[];
  stacks?: Record<string, { status?: string; outputs: Record<string, string> }>;
  dir?: string;
  pids?: Record<string, number>;
}

const STEPS = 'wait-ready,edit-template,wait-rolled,inject-failure,wait-stalled';
const examples = EXAMPLE_NAMES.map((name) => ({ name, raw: rawExample(name) }));
const stackKey = (name: string) => `${examples.find((e) => e.name === name)!.raw.spec.region}/WorkerStack-${name}`;
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

let reports: Report[] = [];
let code: number | null = null;
let stderr = '';
const report = (step: string): Report => {
  const r = reports.find((x) => x.step === step);
  if (!r) throw new Error(`no ${step} report (exit ${code}); the playground said:\n${stderr.slice(-6000)}`);
  return r;
};
const row = (step: string, cluster: string): Row => report(step).clusters!.find((r) => r.cluster === cluster)!;

beforeAll(async () => {
  // GIVEN a clean checkout's examples and templates
  // WHEN the playground runs the whole script and stops
  const child = spawn(
    process.execPath,
    [
      path.join(REPO, 'bin', 'worker-stacks.js'),
      'playground',
      '--steps',
      STEPS,
      '--in-progress-seconds',
      '1',
      '--max-update-attempts',
      '2',
    ],
    {
      cwd: REPO,
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  reports = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Report);
}, 600_000);

test('it runs every step, reports each, and exits 0', () => {
  // THEN one report per step, between start and stop, in order
  expect({ code, steps: reports.map((r) => r.step) }).toEqual({
    code: 0,
    steps: ['start', ...STEPS.split(','), 'stop'],
  });
});

test('every example cluster is Ready with the checksum its live stack carries recorded', () => {
  // GIVEN the report after wait-ready
  const { clusters, stacks } = report('wait-ready');

  // THEN every example is there, Ready, in sync, and its recorded checksum is the stack's ConfigChecksum output
  // (rows come in the status command's order, by region: compared as sets)
  expect(clusters!.map((r) => r.cluster).sort()).toEqual(EXAMPLE_NAMES);
  for (const name of EXAMPLE_NAMES) {
    const r = row('wait-ready', name);
    expect({ name, ready: r.ready, inSync: r.inSync, stackStatus: r.stackStatus }).toEqual({
      name,
      ready: 'True',
      inSync: true,
      stackStatus: 'CREATE_COMPLETE',
    });
    expect(r.liveChecksum).toMatch(/^[0-9a-f]{64}$/);
    expect(stacks![stackKey(name)]).toMatchObject({
      status: 'CREATE_COMPLETE',
      outputs: { ConfigChecksum: r.liveChecksum },
    });
  }
});

test('the EKS example deploys both pools: the AL2023 pool in the shared stack, the Bottlerocket pool in its own', () => {
  // GIVEN the report after wait-ready
  const { stacks } = report('wait-ready');
  const region = examples.find((e) => e.name === 'eks-us2')!.raw.spec.region as string;
  // THEN both stacks are complete, each with the checksum of its own pool's config
  const shared = stacks![`${region}/WorkerStack-eks-us2`];
  const bottlerocket = stacks![`${region}/WorkerStack-eks-us2-Pool-bottlerocket`];
  expect(shared).toMatchObject({ status: 'CREATE_COMPLETE' });
  expect(bottlerocket).toMatchObject({ status: 'CREATE_COMPLETE' });
  expect(bottlerocket.outputs.ConfigChecksum).toMatch(/^[0-9a-f]{64}$/);
  expect(bottlerocket.outputs.ConfigChecksum).not.toBe(shared.outputs.ConfigChecksum);
});

test('the template edit rolls exactly the clusters that use the template: new checksum, new launch template version', () => {
  // GIVEN the template the script edited, and which examples use it (read from the repository's own objects)
  const { template, clusters: rolled } = report('edit-template').changed!;
  const users = examples.filter((e) => e.raw.spec.cloudConfig.template === template).map((e) => e.name);
  const others = EXAMPLE_NAMES.filter((n) => !users.includes(n));
  expect(users.length).toBeGreaterThan(0);
  expect(others.length).toBeGreaterThan(0);
  expect([...(rolled as string[])].sort()).toEqual(users);

  // THEN each user has a new live checksum, equal to its stack's output, after an update
  const after = report('wait-rolled').stacks!;
  for (const name of users) {
    const [before, now] = [row('wait-ready', name), row('wait-rolled', name)];
    expect({ name, ready: now.ready, inSync: now.inSync, stackStatus: now.stackStatus }).toEqual({
      name,
      ready: 'True',
      inSync: true,
      stackStatus: 'UPDATE_COMPLETE',
    });
    expect(now.liveChecksum).not.toBe(before.liveChecksum);
    expect(after[stackKey(name)].outputs.ConfigChecksum).toBe(now.liveChecksum);
    expect(now.status.lastConfigChange).toMatch(/^changed /);
    // A launch template (not the legacy launch configuration) gets a new version.
    const outputs: Partial<Record<string, string>> = report('wait-ready').stacks![stackKey(name)].outputs; // a launch configuration has no version
    const version = outputs.LaunchTemplateVersion;
    if (version !== undefined)
      expect(Number(after[stackKey(name)].outputs.LaunchTemplateVersion)).toBe(Number(version) + 1);
  }

  // AND every other cluster is untouched: same checksum, same stack status, same launch template version
  for (const name of others) {
    expect(row('wait-rolled', name)).toMatchObject({
      ready: 'True',
      inSync: true,
      liveChecksum: row('wait-ready', name).liveChecksum,
      stackStatus: 'CREATE_COMPLETE',
    });
    expect(after[stackKey(name)]).toEqual(report('wait-ready').stacks![stackKey(name)]);
  }
});

test('a stack made to fail is retried --max-update-attempts times, then Stalled; the old config stays live', () => {
  // GIVEN the cluster the script broke (an image EC2 does not know)
  const { cluster, value } = report('inject-failure').changed!;
  expect(value).toBe(MISSING_IMAGE);

  // THEN it is Stalled after 2 failed attempts, its stack rolled back, and it keeps its live checksum
  const r = row('wait-stalled', cluster);
  expect(getCondition(r.status, 'Stalled')).toMatchObject({ status: 'True', reason: 'UpdateFailed' });
  expect(getCondition(r.status, 'Stalled')!.message).toContain(`The image id '[${MISSING_IMAGE}]' does not exist`);
  expect(r.status.controller.failures).toBe(2);
  expect(r.ready).toBe('False');
  expect(r.liveChecksum).toBe(row('wait-rolled', cluster).liveChecksum);
  expect(report('wait-stalled').stacks![stackKey(cluster)].status).toBe('UPDATE_ROLLBACK_COMPLETE');

  // AND the others stay Ready
  for (const name of EXAMPLE_NAMES.filter((n) => n !== cluster))
    expect(row('wait-stalled', name)).toMatchObject({ ready: 'True', inSync: true });
});

test('every process it started is gone, and so is its scratch directory', () => {
  // GIVEN what it started
  const { pids, dir } = report('start');
  expect(Object.keys(pids!).sort()).toEqual(['daemon', 'moto']);

  // THEN none of them runs any more, and the scratch directory is removed
  for (const [what, pid] of Object.entries(pids!))
    expect({ what, alive: isAlive(pid) }).toEqual({ what, alive: false });
  expect(report('stop')).toMatchObject({ dir, kept: false });
  expect(fs.existsSync(dir!)).toBe(false);
});
