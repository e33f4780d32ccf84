import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { getCondition } from '../../lib/model/cluster/schema/status';
import { KubeClient } from '../../lib/platform/kube/client';
import { LabelSelector } from '../../lib/platform/kube/label-selector';
import { Lease } from '../../lib/platform/kube/leader-election';
import { shardLeaseName } from '../../lib/platform/kube/shards';
import { KubeWorkerCluster, objectPath } from '../../lib/platform/kube/resource';
import { workerStackName } from '../../lib/core/naming';
import { REPO } from '../helpers/clusters';
import { KubeApiServer } from '../helpers/kube-apiserver';
import { KubeWithCrd, startKubeWithCrd } from '../helpers/kube-crd';
import { applyObject } from '../helpers/kube-objects';
import { freePort } from '../helpers/moto';
import { launchTemplateUserData, motoCluster, stackActivity, stackOf, startWorld, stopWorld, World } from './harness';
import { Json } from '../helpers/json';
import { eventuallyValue } from '../helpers/eventually';

// Two `worker-stacks reconcile --watch --store kubernetes` processes against moto and a real API server: one leads;
// `kill -9` of the leader while its stack operation is under way (executed, not yet recorded) → the other takes the
// lease once it expires and finishes from the status and the live stack, without executing anything again.

const NAME = 'kube-leader';
const NS = 'fleet';
const STACK = workerStackName(NAME);
const LEASE = { duration: 6, renew: 4, retry: 1 };
let world: World;
let kube: KubeWithCrd;
let api: KubeApiServer;
let admin: KubeClient;
const daemons: { child: ChildProcess; logs: string; port: number }[] = [];

beforeAll(async () => {
  [world, kube] = await Promise.all([startWorld(), startKubeWithCrd()]);
  ({ api, admin } = kube);
  await kube.namespace(NS);
}, 180_000);
afterAll(async () => {
  for (const d of daemons) if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGKILL');
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  await Promise.all([stopWorld(world), kube?.stop()]);
});

async function startDaemon(): Promise<{ child: ChildProcess; logs: string; port: number }> {
  const port = await freePort();
  // A long poll interval holds the window between "executed" and "recorded" open for the kill.
  const args = [
    'reconcile',
    '--watch',
    '--port',
    String(port),
    '--store',
    'kubernetes',
    '--kubeconfig',
    api.kubeconfig,
    '--namespace',
    NS,
    '--s3-force-path-style',
    '--poll-seconds',
    '30',
  ];
  args.push(
    '--lease-duration-seconds',
    String(LEASE.duration),
    '--renew-deadline-seconds',
    String(LEASE.renew),
    '--retry-period-seconds',
    String(LEASE.retry),
    '--synth-threads',
    '0',
  );
  const child = spawn(process.execPath, [path.join(REPO, 'bin', 'worker-stacks.js'), ...args], {
    cwd: REPO,
    env: { ...process.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const d = { child, logs: '', port };
  child.stdout.on('data', (x) => (d.logs += String(x)));
  child.stderr.on('data', (x) => (d.logs += String(x)));
  daemons.push(d);
  return d;
}

/** Until `probe` gives a value; a failure carries the daemons' last output. */
const eventually = <T>(what: string, ms: number, probe: () => T | undefined | Promise<T | undefined>): Promise<T> =>
  eventuallyValue(what, ms, probe, {
    everyMs: 200,
    context: () => `daemon output:\n${daemons.map((d) => d.logs.slice(-3000)).join('\n---\n')}`,
  });

// The daemons watch one namespace: their Lease is named from that scope (lib/platform/kube/shards.ts).
const LEASE_NAME = shardLeaseName({ namespace: NS, selector: LabelSelector.parse('') });
const lease = async () =>
  (
    await admin
      .request<Lease>('GET', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${LEASE_NAME}`)
      .catch(() => undefined)
  )?.body;
const object = async () =>
  (await admin.request<KubeWorkerCluster & { status?: Json }>('GET', objectPath(NS, NAME))).body;
const metric = async (port: number, name: string) => {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then(
    (r) => r.text(),
    () => '',
  );
  return new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1];
};
const ready = async (port: number) => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status;

test('kill -9 of the leader mid-operation: the other replica takes over and finishes without executing again', async () => {
  // GIVEN two daemons; one of them takes the lease, and both are ready (readiness does not wait for leadership)
  const [a, b] = [await startDaemon(), await startDaemon()];
  const first = await eventually('a leader', 120_000, async () => (await lease())?.spec.holderIdentity || undefined);
  const leader = [a, b].find((d) => first.endsWith(`_${d.child.pid}`))!;
  const follower = leader === a ? b : a;
  expect(leader).toBeDefined();
  await eventually('both ready', 60_000, async () => (await ready(a.port)) === 200 && (await ready(b.port)) === 200);
  await eventually(
    'the leader gauge',
    30_000,
    async () =>
      (await metric(leader.port, 'worker_stacks_leader')) === '1' &&
      (await metric(follower.port, 'worker_stacks_leader')) === '0',
  );

  // WHEN a cluster object is created, and the leader has executed its stack's change set but not recorded the result
  await applyObject(admin, NS, motoCluster(world, NAME));
  await eventually('the executed create, not yet recorded', 120_000, async () => {
    const o = await object();
    return o.status?.controller?.executing && (await stackOf(world, STACK)) ? o : undefined;
  });
  const renewedBeforeKill = Date.parse((await lease())!.spec.renewTime!);
  leader.child.kill('SIGKILL');

  // THEN the follower takes the lease once it expires (one transition, acquired within a lease duration plus a retry)
  const taken = await eventually('the takeover', 60_000, async () => {
    const l = await lease();
    return l && l.spec.holderIdentity?.endsWith(`_${follower.child.pid}`) ? l : undefined;
  });
  expect(taken.spec.leaseTransitions).toBe(1);
  expect(Date.parse(taken.spec.acquireTime!) - renewedBeforeKill).toBeLessThanOrEqual(
    (LEASE.duration + 2 * LEASE.retry + 1) * 1000,
  );

  // AND it records the operation as the stack reports it: Ready, the live checksum, no second execution
  const done = await eventually('Ready=True', 60_000, async () => {
    const o = await object();
    return getCondition(o.status, 'Ready')?.status === 'True' ? o : undefined;
  });
  expect(done.status.cloudConfigChecksum).toMatch(/^[0-9a-f]{64}$/);
  expect(done.status.controller?.executing).toBeUndefined();
  // (moto lists the bootstrap stack's change set too: only the reconciler's, ws-<fingerprint>-<hash>, are counted)
  const executed = (await stackActivity(world, STACK)).changeSets.filter((s) =>
    /^ws-[0-9a-f]{24}-[0-9a-f]{8}:EXECUTE_COMPLETE$/.test(s),
  );
  expect(executed).toHaveLength(1);
  expect(launchTemplateUserData(world, STACK)).toHaveLength(1);
  expect(await metric(follower.port, 'worker_stacks_leader')).toBe('1');

  // WHEN the user edits the spec twice in quick succession while the new leader reconciles and writes status
  await applyObject(
    admin,
    NS,
    motoCluster(world, NAME, (r) => (r.spec.cloudConfig.values.maxPods = 61)),
  );
  await applyObject(
    admin,
    NS,
    motoCluster(world, NAME, (r) => (r.spec.cloudConfig.values.maxPods = 62)),
  );

  // THEN nothing is lost: the last edit's generation is observed and its config is live
  const last = await eventually('the last edit applied', 120_000, async () => {
    const o = await object();
    return o.status?.observedGeneration === o.metadata.generation &&
      getCondition(o.status, 'Ready')?.status === 'True' &&
      o.status.cloudConfigChecksum !== done.status.cloudConfigChecksum
      ? o
      : undefined;
  });
  expect(last.metadata.generation).toBe(3);
  expect(launchTemplateUserData(world, STACK).at(-1)?.userData).toContain(last.status.cloudConfigChecksum);
}, 400_000);
