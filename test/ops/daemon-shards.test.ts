import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeClient } from '../../lib/platform/kube/client';
import { KubeApiServer, startKubeApiServer } from '../helpers/kube-apiserver';
import { freePort } from '../helpers/moto';
import { CHART, goTool, Json, runOk } from '../charts/tools';
import { createUnrenderable, getOrUndefined, PodProcess, runDeploymentAsPod } from './daemon-as-pod';

// The chart's shards, run: helm installs two shards (canary: tier=canary, main: tier!=canary), and the canary shard's
// Deployment runs as its pod would (./daemon-as-pod.ts). With the chart's Role and Lease admission policy it must be
// able to take exactly its own Lease, worker-stacks-canary, and it reconciles only the objects its selector selects.

const NS = 'worker-stacks';
let api: KubeApiServer;
let admin: KubeClient;
let canary: PodProcess | undefined;
let scratch: string;

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-shards-'));
  api = await startKubeApiServer();
  admin = KubeClient.fromOptions({ kubeconfig: api.kubeconfig });
  const port = await freePort();
  runOk(goTool('helm'), [
    'install',
    'worker-stacks',
    CHART,
    '--kubeconfig',
    api.kubeconfig,
    '--namespace',
    'default',
    '--set',
    'shards[0].name=canary,shards[0].selector=tier=canary,shards[1].name=main,shards[1].selector=tier!=canary',
    '--set',
    `reconciler.port=${port}`,
    '--set',
    'reconciler.bind=127.0.0.1',
  ]);
  await admin.request('POST', '/api/v1/namespaces', { metadata: { name: 'team-a' } });
  await createUnrenderable(admin, 'team-a', 'canary-one', { tier: 'canary' });
  await createUnrenderable(admin, 'team-a', 'main-one', { tier: 'prod' });
}, 180_000);

afterAll(async () => {
  await canary?.kill();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  admin?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  await api?.stop();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

test('the canary shard, run as its pod, holds the Lease worker-stacks-canary and reconciles only the objects tier=canary selects', async () => {
  // WHEN the canary shard's Deployment runs
  canary = await runDeploymentAsPod(
    api,
    admin,
    NS,
    'worker-stacks-canary',
    'worker-stacks-canary-5c8d7-xyz12',
    scratch,
  );
  // THEN it holds its own Lease, whose name the chart's Role and Lease policy allow
  const lease = await canary.eventually('the canary Lease', 60_000, () =>
    getOrUndefined(admin, `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/worker-stacks-canary`),
  );
  expect(lease.spec.holderIdentity).toMatch(/^worker-stacks-canary-5c8d7-xyz12_\d+$/);
  // AND it stalls the canary object (its template does not exist) ...
  const status = await canary.eventually(
    "the canary object's status",
    60_000,
    async () =>
      (await getOrUndefined(admin, '/apis/worker-stacks.io/v1alpha1/namespaces/team-a/workerclusters/canary-one'))
        ?.status as Json | undefined,
  );
  expect(status.conditions.find((c: Json) => c.type === 'Stalled')).toMatchObject({
    status: 'True',
    reason: 'InvalidSpec',
  });
  // ... and leaves the main shard's object alone, and no Lease but its own was taken
  const main = await getOrUndefined(admin, '/apis/worker-stacks.io/v1alpha1/namespaces/team-a/workerclusters/main-one');
  expect(main?.status).toBeUndefined();
  const leases = (
    await admin.request<Json>('GET', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`)
  ).body.items.map((l: Json) => l.metadata.name);
  expect(leases).toEqual(['worker-stacks-canary']);
  // AND it stops cleanly
  expect(await canary.terminate()).toBe(0);
}, 180_000);
