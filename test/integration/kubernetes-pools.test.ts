import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { getCondition } from '../../lib/model/cluster/schema/status';
import { renderCluster } from '../../lib/model/cluster/derive';
import { validateCluster } from '../../lib/model/cluster/validate';
import { UNKNOWN_POOL } from '../../lib/model/cluster/pools/pool-rules';
import { listTemplates } from '../../lib/model/cloudconfig/templates';
import { KubeWorkerCluster, objectPath } from '../../lib/platform/kube/resource';
import { poolStackName, workerStackName } from '../../lib/core/naming';
import { goTool, run, runOk } from '../charts/tools';
import { tempDir } from '../helpers/clusters';
import { KubeWithCrd, startKubeWithCrd } from '../helpers/kube-crd';
import { Json } from '../helpers/json';
import { AWS_FLAGS, cli, pooledMotoCluster, stackActivity, startWorld, stopWorld, World } from './harness';
import { defaultTemplates } from '../../lib/platform/files/template-directory';

// Issue 23 end to end against the real API server: a WorkerCluster of two pools (`default` in the shared stack,
// `spot` in its own stack) applied with the real kubectl, reconciled once with the Kubernetes store against moto (the
// wrapper), its status per pool written through the status subresource and shown by `kubectl get wc` as Pools 2/2.
// Then a listener naming a pool the object does not have: refused by the API server (the CRD's CEL rules) at its
// field, with the message `worker-stacks validate` gives for the same object.

const NAME = 'kube-pools';
const NS = 'fleet';
const SHARED = workerStackName(NAME);
const SPOT = poolStackName(NAME, 'spot');
let world: World;
let server: KubeWithCrd;
let kubectl: string;
let scratch: string;

const kube = () => ['--store', 'kubernetes', '--kubeconfig', server.api.kubeconfig, '--namespace', NS];
const k = (args: readonly string[]) => run(kubectl, ['--kubeconfig', server.api.kubeconfig, ...args]);
const kOk = (args: readonly string[]) => runOk(kubectl, ['--kubeconfig', server.api.kubeconfig, ...args]);
const object = async () =>
  (await server.admin.request<KubeWorkerCluster & { status?: Json }>('GET', objectPath(NS, NAME))).body;

beforeAll(async () => {
  kubectl = goTool('kubectl');
  // The wrapper: exports of change-set stacks, ImportValue resolved in them, stacks in progress for a while as in AWS.
  [world, server] = await Promise.all([startWorld({ inProgressSeconds: 2 }), startKubeWithCrd()]);
  await server.namespace(NS);
  scratch = tempDir('kube-pools');
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  await Promise.all([stopWorld(world), server?.stop()]);
});

const pooled = (name: string, mutate: (raw: Json) => void = () => undefined): Json =>
  pooledMotoCluster(world, name, 'spot', mutate);

/** Writes the object where `kubectl apply -f` (or `validate --clusters`) reads it, alone in its own folder. */
function written(raw: Json, folder: string): string {
  const dir = path.join(scratch, folder);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${raw.metadata.name as string}.yaml`);
  fs.writeFileSync(file, stringify(raw));
  return file;
}

/** Each pool's checksum, as the reconciler derives it. */
function checksums(raw: unknown): Record<string, string> {
  const v = validateCluster(raw, { file: NAME, templates: listTemplates(defaultTemplates()) });
  if (!v.cluster) throw new Error(`invalid: ${JSON.stringify(v.problems)}`);
  const r = renderCluster(v.cluster, NAME, defaultTemplates());
  if (!('configs' in r)) throw new Error(`does not render: ${JSON.stringify(r.problems)}`);
  return Object.fromEntries([...r.configs].map(([pool, c]) => [pool, c.checksum]));
}

test('a two-pool WorkerCluster: accepted by the API server, both stacks created, status per pool, kubectl shows Pools 2/2', async () => {
  // GIVEN a WorkerCluster of two pools, applied with kubectl
  const raw = pooled(NAME);
  const want = checksums(raw);
  expect(want.default).not.toBe(want.spot);
  expect(kOk(['apply', '-n', NS, '-f', written(raw, 'good')])).toContain(
    `workercluster.worker-stacks.io/${NAME} created`,
  );

  // WHEN one pass runs against the Kubernetes store
  const pass = await cli(['reconcile', '--once', ...kube(), ...AWS_FLAGS]);

  // THEN both stacks exist in moto, complete
  expect({ code: pass.code, err: pass.err }).toEqual({ code: 0, err: '' });
  expect((await stackActivity(world, SHARED)).status).toMatch(/^CREATE_COMPLETE$/);
  expect((await stackActivity(world, SPOT)).status).toMatch(/^CREATE_COMPLETE$/);

  // AND the object's status records each pool's checksum from its own stack, 2/2 ready, Ready=True
  const o = await object();
  expect(o.status.cloudConfigChecksum).toBe(want.default);
  expect(o.status.pools).toEqual([
    expect.objectContaining({
      name: 'spot',
      stackName: SPOT,
      cloudConfigChecksum: want.spot,
      desiredChecksum: want.spot,
      observedGeneration: 1,
    }),
  ]);
  expect(o.status.poolsReady).toBe('2/2');
  expect(getCondition(o.status, 'Ready')).toMatchObject({ status: 'True', observedGeneration: 1 });

  // AND the real kubectl prints the Pools column as 2/2
  // (read by the header's column offset: an empty cell, such as Pending with nothing pending, is only spaces)
  const table = kOk(['get', 'wc', '-n', NS]).trimEnd().split('\n');
  const at = table[0].indexOf('POOLS');
  const row = table.find((l) => l.startsWith(`${NAME} `));
  expect(at).toBeGreaterThan(0);
  expect(row?.slice(at).split(/\s+/)[0]).toBe('2/2');
}, 300_000);

/** The two-pool object with the prod example's load balancer and one listener that names `pools`. */
const withListener = (name: string, pools: string[]): Json =>
  pooled(name, (raw) => {
    raw.spec.loadBalancer = { scheme: 'internal', allowedCidrs: ['10.0.0.0/8'] };
    raw.spec.listeners = [
      {
        name: 'ingress-https',
        port: 443,
        nodePort: 30443,
        healthCheck: { protocol: 'HTTP', port: 30254, path: '/healthz' },
        pools,
      },
    ];
  });

test('a listener naming a pool that does not exist: refused by the API server at its field, as validate refuses it', async () => {
  // GIVEN the two-pool object with a listener that names the pool spot: validate and the API server accept it
  const good = written(withListener('kube-pools-bad', ['spot']), 'listener-good');
  expect(await cli(['validate', '--clusters', path.dirname(good)])).toMatchObject({ code: 0, err: '' });
  expect(kOk(['apply', '--dry-run=server', '-n', NS, '-f', good])).toContain('created (server dry run)');
  // AND the same object whose listener names also a pool `gpu` it does not have
  const file = written(withListener('kube-pools-bad', ['spot', 'gpu']), 'listener-bad');
  const message = `"gpu" ${UNKNOWN_POOL} (rule pool-names-known)`;

  // WHEN validate reads it, and kubectl applies it
  const validated = await cli(['validate', '--clusters', path.dirname(file)]);
  const applied = k(['apply', '-n', NS, '-f', file]);

  // THEN validate refuses it with one problem: the file, the field path and the rule
  expect(validated.code).toBe(1);
  expect(validated.err.trimEnd().split('\n')).toEqual([
    expect.stringMatching(/kube-pools-bad\.yaml: spec\.listeners\[0\]\.pools\[1\]: /),
  ]);
  expect(validated.err).toContain(`kube-pools-bad.yaml: spec.listeners[0].pools[1]: ${message}\n`);
  // AND the API server refuses it at the listeners with the same field path and message; nothing was created
  expect(applied.code).toBe(1);
  expect(applied.stderr).toBe(
    `The WorkerCluster "kube-pools-bad" is invalid: spec.listeners: Invalid value: spec.listeners[0].pools[1] ${message}\n`,
  );
  expect(k(['get', 'wc', 'kube-pools-bad', '-n', NS]).code).toBe(1);
}, 120_000);
