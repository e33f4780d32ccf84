import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getCondition } from '../../lib/model/cluster/schema/status';
import { KubeClient } from '../../lib/platform/kube/client';
import { Lease } from '../../lib/platform/kube/leader-election';
import { deployManifests, NAME as SA_NAME } from '../../lib/platform/kube/manifests';
import { KubeWorkerCluster, objectPath } from '../../lib/platform/kube/resource';
import { SELECTOR_ANNOTATION } from '../../lib/platform/kube/shards';
import { ShardMonitor } from '../../lib/platform/kube/shard-monitor';
import { LabelSelector } from '../../lib/platform/kube/label-selector';
import { REPO } from '../helpers/clusters';
import { kubeForFile } from '../helpers/kube-crd';
import { applyObject } from '../helpers/kube-objects';
import { create } from '../helpers/kube-rest';
import { freePort } from '../helpers/moto';
import { objectNamed } from '../adapters/stores/store-contract';
import { Json } from '../helpers/json';
import { eventuallyValue } from '../helpers/eventually';

// Shards as README runs them, against the real API server and the RBAC `manifests --shard` renders: two daemons
// (`--shard canary -l tier=canary`, `--shard stable -l tier=stable`), as the ServiceAccount (impersonated), both lead
// (one Lease each, the only ones RBAC and the admission policy let them hold), each reconciles its own objects; an
// object neither selects is counted, logged and gets one Unowned event; a third daemon whose selector overlaps them
// refuses to start. No AWS: the objects name a template the daemon does not have, so a reconcile ends at validate
// (Stalled InvalidSpec) — enough to see which objects were reconciled.

const kube = kubeForFile();
const admin = (): KubeClient => kube.current.admin;
const NS = 'fleet';
const DAEMON_NS = 'worker-stacks';
const { version } = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
const SHARDS = [
  { name: 'canary', selector: 'tier=canary' },
  { name: 'stable', selector: 'tier=stable' },
];
const LEASE = { duration: 6, renew: 4, retry: 1 };
const daemons: { child: ChildProcess; logs: string; port: number; exit?: number | null }[] = [];
let saKubeconfig: string;

beforeAll(async () => {
  const { api } = kube.current;
  // The shards' RBAC (ClusterRole, Lease Role by name, admission policies), as `manifests --shard ...` renders it.
  const m = deployManifests({ version, shards: SHARDS });
  for (const o of [...m['namespace.yaml'], ...m['rbac.yaml']]) {
    const r = await create(api, o);
    if (r.status !== 201) throw new Error(`${o.kind} ${o.metadata.name} refused: ${JSON.stringify(r.body)}`);
  }
  await kube.current.namespace(NS);
  // The daemon's identity: the admin's token, impersonating the ServiceAccount (as the API server sees the pod).
  saKubeconfig = path.join(api.dir, 'sa.kubeconfig');
  fs.writeFileSync(
    saKubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'k',
          cluster: { server: api.server, 'certificate-authority-data': Buffer.from(api.caPem).toString('base64') },
        },
      ],
      users: [{ name: 'sa', user: { token: api.adminToken, as: `system:serviceaccount:${DAEMON_NS}:${SA_NAME}` } }],
      contexts: [{ name: 'sa', context: { cluster: 'k', user: 'sa' } }],
      'current-context': 'sa',
    }),
  );
}, 120_000);
// Each test stops its daemons (SIGTERM: each releases its Lease), so that no test sees another's shards.
afterEach(async () => {
  await Promise.all(
    daemons.splice(0).map(async (d) => {
      if (d.child.exitCode !== null || d.child.signalCode !== null) return;
      const exited = new Promise((r) => d.child.once('exit', r));
      d.child.kill('SIGTERM');
      const timer = setTimeout(() => d.child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }),
  );
}, 60_000);

async function startDaemon(shardArgs: string[]) {
  const port = await freePort();
  const args = [
    'reconcile',
    '--watch',
    '--store',
    'kubernetes',
    '--kubeconfig',
    saKubeconfig,
    '--all-namespaces',
    '--port',
    String(port),
    '--leader-election-namespace',
    DAEMON_NS,
    '--synth-threads',
    '0',
    '--shard-check-seconds',
    '5',
  ];
  args.push(
    '--lease-duration-seconds',
    String(LEASE.duration),
    '--renew-deadline-seconds',
    String(LEASE.renew),
    '--retry-period-seconds',
    String(LEASE.retry),
    ...shardArgs,
  );
  // No AWS here: a refused object never reaches it, and anything that tries fails at once.
  const env = {
    ...process.env,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_REGION: 'eu-west-1',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    POD_NAMESPACE: DAEMON_NS,
  };
  const child = spawn(process.execPath, [path.join(REPO, 'bin', 'worker-stacks.js'), ...args], {
    cwd: REPO,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const d: (typeof daemons)[number] = { child, logs: '', port };
  child.stdout.on('data', (x) => (d.logs += String(x)));
  child.stderr.on('data', (x) => (d.logs += String(x)));
  child.on('exit', (code) => (d.exit = code));
  daemons.push(d);
  return d;
}

/** Until `probe` gives a value; a failure carries the daemons' last output. */
const eventually = <T>(what: string, ms: number, probe: () => T | undefined | Promise<T | undefined>): Promise<T> =>
  eventuallyValue(what, ms, probe, {
    everyMs: 200,
    context: () => `daemon output:\n${daemons.map((d) => d.logs.slice(-3000)).join('\n---\n')}`,
  });

const metric = async (port: number, name: string) => {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then(
    (r) => r.text(),
    () => '',
  );
  return new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1];
};
const lease = async (name: string) =>
  (
    await admin()
      .request<Lease>('GET', `/apis/coordination.k8s.io/v1/namespaces/${DAEMON_NS}/leases/${name}`)
      .catch(() => undefined)
  )?.body;
const object = async (name: string) =>
  (await admin().request<KubeWorkerCluster & { status?: Json }>('GET', objectPath(NS, name))).body;
const events = async (name: string) => {
  const { body } = await admin().request<{
    items: { reason: string; message: string; type: string; involvedObject: { kind: string } }[];
  }>('GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name=${name}`);
  return body.items.filter((e) => e.involvedObject.kind === 'WorkerCluster').map((e) => [e.type, e.reason]);
};
const refused = (name: string, tier: string) =>
  objectNamed(name, (r) => {
    r.metadata.labels = { tier };
    r.spec.cloudConfig.template = 'no-such-template';
  });

test('two shards run side by side on their own Leases and reconcile only their objects; an unowned object is reported; an overlapping shard refuses to start', async () => {
  // GIVEN one object per shard, and one that no shard selects
  for (const [name, tier] of [
    ['canary-1', 'canary'],
    ['stable-1', 'stable'],
    ['edge-1', 'edge'],
  ])
    await applyObject(admin(), NS, refused(name, tier));

  // WHEN the two shards' daemons start
  const [canary, stable] = [
    await startDaemon(['--shard', 'canary', '--selector', 'tier=canary']),
    await startDaemon(['--shard', 'stable', '--selector', 'tier=stable']),
  ];

  // THEN both lead, each on its own Lease (which carries its selector)
  await eventually(
    'both shards lead',
    90_000,
    async () =>
      (await metric(canary.port, 'worker_stacks_leader')) === '1' &&
      (await metric(stable.port, 'worker_stacks_leader')) === '1',
  );
  for (const [d, name, selector] of [
    [canary, 'worker-stacks-canary', 'tier=canary'],
    [stable, 'worker-stacks-stable', 'tier=stable'],
  ] as const) {
    // The leader metric can be read before a GET of its Lease answers on a loaded machine: read it once it does.
    await eventually(`Lease ${name} readable`, 30_000, async () => Boolean((await lease(name))?.spec.holderIdentity));
    const l = (await lease(name))!;
    expect({
      holder: l.spec.holderIdentity?.endsWith(`_${d.child.pid}`),
      selector: l.metadata.annotations?.[SELECTOR_ANNOTATION],
    }).toEqual({ holder: true, selector });
  }

  // AND each object of a shard is reconciled (refused for its template, which only a reconcile finds); the unowned one is not
  for (const name of ['canary-1', 'stable-1']) {
    await eventually(
      `${name} reconciled`,
      60_000,
      async () => getCondition((await object(name)).status, 'Stalled')?.reason === 'InvalidSpec',
    );
  }
  expect((await object('edge-1')).status).toBeUndefined();

  // AND the unowned one is counted by each shard, logged, and gets one Warning event (from one shard, not both)
  await eventually(
    'the unowned object counted',
    60_000,
    async () =>
      (await metric(canary.port, 'worker_stacks_unowned_clusters')) === '1' &&
      (await metric(stable.port, 'worker_stacks_unowned_clusters')) === '1',
  );
  await eventually('the Unowned event', 30_000, async () => (await events('edge-1')).length > 0);
  expect(await events('edge-1')).toEqual([['Warning', 'Unowned']]);
  expect(canary.logs).toMatch(/"unowned":\["fleet\/edge-1"\].*WorkerClusters no live shard selects/);
  expect(await metric(canary.port, 'worker_stacks_multiply_owned_clusters')).toBe('0');

  // WHEN a third daemon starts whose selector overlaps both (everything)
  const everything = await startDaemon(['--shard', 'everything']);

  // THEN it refuses to start, naming the shard it overlaps and what to do
  await eventually('the overlapping shard exits', 60_000, () => everything.exit !== undefined || undefined);
  expect(everything.exit).toBe(2);
  expect(everything.logs).toMatch(/overlaps the live shard of Lease worker-stacks-(canary|stable)/);
  expect(everything.logs).toContain('make the shards disjoint');
  expect(await lease('worker-stacks-everything')).toBeUndefined();
  expect(await metric(canary.port, 'worker_stacks_leader')).toBe('1');
}, 300_000);

test("README's two shards given by -l alone (no --shard) each get a Lease named from the selector, and both lead", async () => {
  // GIVEN two daemons on disjoint selectors, with the admin's rights (their Leases are named from the selectors)
  const asAdmin = ['--kubeconfig', kube.current.api.kubeconfig];
  const [a, b] = [
    await startDaemon(['--selector', 'ring=canary', ...asAdmin]),
    await startDaemon(['--selector', 'ring!=canary', ...asAdmin]),
  ];

  // THEN both lead at once: they do not share one Lease
  await eventually(
    'both lead',
    90_000,
    async () =>
      (await metric(a.port, 'worker_stacks_leader')) === '1' && (await metric(b.port, 'worker_stacks_leader')) === '1',
  );
  const { body } = await admin().request<{ items: Lease[] }>(
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/${DAEMON_NS}/leases`,
  );
  const holders = body.items
    .filter((l) => [a, b].some((d) => l.spec.holderIdentity?.endsWith(`_${d.child.pid}`)))
    .map((l) => l.metadata.name);
  expect(holders).toHaveLength(2);
  for (const name of holders) expect(name).toMatch(/^worker-stacks-[0-9a-f]{10}$/);
}, 180_000);

test('a fresh install: the shard monitor looks at ownership before any WorkerCluster exists (the API server lists none as items: null)', async () => {
  // GIVEN a namespace with no WorkerCluster yet, and a shard of it
  const ns = await kube.current.namespace('fresh-install');
  const warnings: string[] = [];
  const monitor = new ShardMonitor({
    client: admin(),
    leaseNamespace: DAEMON_NS,
    leaseName: 'worker-stacks-fresh',
    scope: { shard: 'fresh', namespace: ns, selector: LabelSelector.parse('tier=fresh') },
    log: { info: () => undefined, warn: (_o, m) => warnings.push(m), error: (_o, m) => warnings.push(m) },
  });

  // WHEN it looks
  const seen = await monitor.check();

  // THEN it finds nothing unowned, and says nothing is wrong
  expect(seen).toEqual({ unowned: [], multiple: [] });
  expect(warnings).toEqual([]);
});

test('an object is reported Unowned only once no shard has selected it for reportAfterMs: a shard starting a little later, or a Lease that lapsed, leaves no event behind', async () => {
  // GIVEN two objects no live shard selects, and a shard's monitor on a clock of the test's
  const ns = await kube.current.namespace('late-shard');
  await applyObject(admin(), ns, refused('brief-1', 'late'));
  await applyObject(admin(), ns, refused('lasting-1', 'late'));
  let now = Date.now();
  const monitor = new ShardMonitor({
    client: admin(),
    leaseNamespace: DAEMON_NS,
    leaseName: 'worker-stacks-early',
    scope: { shard: 'early', namespace: ns, selector: LabelSelector.parse('tier=early') },
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    now: () => now,
    reportAfterMs: 30_000,
  });
  const unownedEvents = async (name: string) => {
    const { body } = await admin().request<{ items: { reason: string }[] }>(
      'GET',
      `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=${name}`,
    );
    return body.items.filter((e) => e.reason === 'Unowned').length;
  };

  // WHEN it looks, one object is then selected (its shard came up) within the grace, and it looks again past it
  expect((await monitor.check()).unowned).toEqual([`${ns}/brief-1`, `${ns}/lasting-1`]);
  now += 10_000;
  await applyObject(admin(), ns, refused('brief-1', 'early'));
  expect((await monitor.check()).unowned).toEqual([`${ns}/lasting-1`]);
  now += 25_000;
  await monitor.check();

  // THEN only the object unowned all along got its event, once
  expect(await unownedEvents('brief-1')).toBe(0);
  expect(await unownedEvents('lasting-1')).toBe(1);
  now += 60_000;
  await monitor.check();
  expect(await unownedEvents('lasting-1')).toBe(1);
});
