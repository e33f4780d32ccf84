import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { getCondition } from '../../lib/model/cluster/schema/status';
import { REPO } from '../helpers/clusters';
import { freePort } from '../helpers/moto';
import {
  AWS_FLAGS,
  launchTemplateUserData,
  motoCluster,
  startWorld,
  stateFile,
  stopWorld,
  World,
  writeCluster,
} from './harness';
import { eventuallyValue } from '../helpers/eventually';

// Against moto, the real binary: `worker-stacks reconcile --watch --port <n>` as a child process.

const NAME = 'moto-daemon';
let world: World;
let daemon: ChildProcess | undefined;
let port: number;
let logs = '';
const exited = () =>
  new Promise<number | null>((resolve) =>
    daemon!.exitCode !== null ? resolve(daemon!.exitCode) : daemon!.once('exit', (code) => resolve(code)),
  );

beforeAll(async () => {
  world = await startWorld();
  port = await freePort();
}, 120_000);
afterAll(async () => {
  if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
    daemon.kill('SIGKILL');
    await exited();
  }
  await stopWorld(world);
});

async function get(route: string): Promise<{ status: number; body: string } | undefined> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}${route}`, { signal: AbortSignal.timeout(2000) });
    return { status: r.status, body: await r.text() };
  } catch {
    return undefined; // not listening (yet, or any more)
  }
}

/** Polls `probe` until it returns something truthy, or fails after `ms` with what the daemon logged. */
/** Until `probe` gives a value, while the daemon runs; a failure carries its last output. */
const eventually = <T>(what: string, ms: number, probe: () => T | undefined | Promise<T | undefined>): Promise<T> =>
  eventuallyValue(what, ms, probe, {
    context: () => `daemon output:\n${logs.slice(-4000)}`,
    stop: () => (daemon?.exitCode !== null ? `the daemon exited (${daemon?.exitCode})` : undefined),
  });

const checksum = () => {
  try {
    return stateFile(world, NAME).status?.cloudConfigChecksum as string | undefined;
  } catch {
    return undefined;
  }
};

test('the daemon serves health, applies the cluster, reacts to an edit within 30 s, and exits 0 on SIGTERM', async () => {
  // GIVEN a new cluster object
  writeCluster(world, motoCluster(world, NAME));

  // WHEN the daemon starts
  daemon = spawn(
    process.execPath,
    [
      path.join(REPO, 'bin', 'worker-stacks.js'),
      'reconcile',
      '--watch',
      '--port',
      String(port),
      '--clusters',
      world.dir,
      ...AWS_FLAGS,
    ],
    {
      cwd: REPO,
      env: { ...process.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  daemon.stdout!.on('data', (d) => (logs += String(d)));
  daemon.stderr!.on('data', (d) => (logs += String(d)));

  // THEN /healthz answers 200 as soon as it serves, and /readyz is 503 until the first pass is done
  const firstReady = await eventually('the ops server', 60_000, () => get('/readyz'));
  expect(firstReady.status).toBe(503);
  expect(await get('/healthz')).toEqual({ status: 200, body: 'ok\n' });

  // AND after the first pass /readyz is 200; the stack is created, watched without a waiter, and its live checksum recorded
  await eventually('/readyz 200', 60_000, async () => (await get('/readyz'))?.status === 200);
  const first = await eventually('the live checksum in the status', 60_000, () => checksum());
  expect(first).toMatch(/^[0-9a-f]{64}$/);
  expect(getCondition(stateFile(world, NAME).status, 'Ready')).toMatchObject({ status: 'True' });

  // AND /metrics counts the reconcile by result (the fleet gauges follow within a second of a reconcile)
  await eventually('the fleet gauges', 10_000, async () =>
    /condition="Ready",status="True",account="\d{12}"\} 1$/m.test((await get('/metrics'))?.body ?? ''),
  );
  const metrics = await get('/metrics');
  expect(metrics?.status).toBe(200);
  expect(metrics?.body).toMatch(/^worker_stacks_reconciles_total\{result="applied",account="\d{12}"\} 1$/m);
  expect(metrics?.body).toMatch(/^worker_stacks_clusters\{condition="Ready",status="True",account="\d{12}"\} 1$/m);

  // AND every log line is JSON; every line about the cluster names it, its generation, and (once rendered) the desired checksum
  const lines = logs
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  const about = lines.filter((l) => l.cluster === NAME);
  expect(about.map((l) => l.msg)).toEqual(
    expect.arrayContaining(['assets published', 'stack applied; live checksum recorded', 'applied']),
  );
  for (const l of about)
    expect({ msg: l.msg, generation: l.generation, checksum: l.checksum }).toEqual({
      msg: l.msg,
      generation: 1,
      checksum: first,
    });

  // WHEN the object is edited (a config change)
  const edited = Date.now();
  writeCluster(
    world,
    motoCluster(world, NAME, (raw) => (raw.spec.cloudConfig.values.maxPods = 77)),
  );

  // THEN within 30 s a change set rolls the launch template to the new checksum, and it is recorded for generation 2
  const second = await eventually('the new checksum in the status', 30_000, () =>
    checksum() !== first ? checksum() : undefined,
  );
  expect(Date.now() - edited).toBeLessThan(30_000);
  expect(stateFile(world, NAME).status.observedGeneration).toBe(2);
  expect(launchTemplateUserData(world, `WorkerStack-${NAME}`).at(-1)?.userData).toContain(second);
  await eventually('the second apply in /metrics', 10_000, async () =>
    /^worker_stacks_reconciles_total\{result="applied",account="\d{12}"\} 2$/m.test(
      (await get('/metrics'))?.body ?? '',
    ),
  );

  // WHEN it gets SIGTERM
  const stopping = Date.now();
  daemon.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    exited(),
    new Promise<string>((r) => (timer = setTimeout(() => r('still running after the grace period'), 25_000))),
  ]);
  clearTimeout(timer);

  // THEN it exits 0 within the grace period, and stops serving
  expect(code).toBe(0);
  expect(Date.now() - stopping).toBeLessThan(25_000);
  expect(await get('/healthz')).toBeUndefined();
}, 150_000);
