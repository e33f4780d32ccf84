import { KubeApiError } from '../../../lib/core/errors';
import { KubeClient } from '../../../lib/platform/kube/client';
import { collectionPath, KubeWorkerCluster, objectPath } from '../../../lib/platform/kube/resource';
import { Informer, InformerEvent } from '../../../lib/platform/kube/watch';
import { KubernetesStore } from '../../../lib/adapters/stores/kubernetes-store';
import { KubeApiServer } from '../../helpers/kube-apiserver';
import { kubeForFile } from '../../helpers/kube-crd';
import { applyObject } from '../../helpers/kube-objects';
import { objectNamed } from '../../adapters/stores/store-contract';
import { eventually as until } from '../../helpers/eventually';
import { Json } from '../../helpers/json';

/**
 * The list + watch cache against a real API server: it survives the API server's restart (etcd kept) and a 410 Gone
 * (a resourceVersion the restarted server's watch cache no longer has), and loses no change either way.
 */
const kube = kubeForFile();
const api = (): KubeApiServer => kube.current.api;
const admin = (): KubeClient => kube.current.admin;
let n = 0;

async function namespace(): Promise<string> {
  return kube.current.namespace(`watch-${++n}`);
}

const eventually = (probe: () => boolean | Promise<boolean>, what: string, ms = 30_000) => until(probe, what, ms);

function informer(ns: string) {
  const client = KubeClient.fromOptions({ kubeconfig: api().kubeconfig });
  const events: [InformerEvent, string, number | undefined][] = [];
  const inf = new Informer<KubeWorkerCluster>(
    client,
    collectionPath(ns),
    (type, o) => events.push([type, o.metadata.name, (o.spec as Json)?.pool?.maxSize]),
    { backoffBaseMs: 100, backoffMaxMs: 1000 },
  );
  return { inf, events, client };
}

test('the test API server authenticates two tokens and enforces RBAC for the restricted one', async () => {
  // GIVEN the restricted user's kubeconfig, with no RoleBinding
  const restricted = KubeClient.fromOptions({ kubeconfig: api().restrictedKubeconfig });

  // WHEN it lists WorkerClusters, THEN RBAC forbids it (403), while the admin may
  await expect(restricted.request('GET', collectionPath('default'))).rejects.toMatchObject({ statusCode: 403 });
  await expect(admin().request('GET', collectionPath('default'))).resolves.toMatchObject({ statusCode: 200 });
  restricted.close();
});

test('a watch survives the API server restart (etcd kept) and delivers the edits made after it', async () => {
  // GIVEN an informer synced on a namespace with one object
  const ns = await namespace();
  await applyObject(admin(), ns, objectNamed('alpha'));
  const { inf, events, client } = informer(ns);
  inf.start();
  await inf.synced();
  expect(events).toEqual([['ADDED', 'alpha', 30]]);

  // WHEN the API server restarts, and then the object is edited
  await api().restartApiServer();
  await applyObject(
    admin(),
    ns,
    objectNamed('alpha', (r) => (r.spec.pool.maxSize = 21)),
  );

  // THEN the edit arrives, and the cache has it
  await eventually(
    () => events.some(([t, name, max]) => t === 'MODIFIED' && name === 'alpha' && max === 21),
    'the edit after the restart is delivered',
  );
  expect((inf.items.get(`${ns}/alpha`)!.spec as Json).pool.maxSize).toBe(21);
  expect(inf.stats.watchErrors + inf.stats.relistsAfterGone).toBeGreaterThan(0); // it did lose its watch
  inf.stop();
  client.close();
});

test('a 410 Gone makes it list again, and the list delivers what it missed: edits and deletions', async () => {
  // GIVEN an informer that synced two objects, then stopped (its resourceVersion kept)
  const ns = await namespace();
  await applyObject(admin(), ns, objectNamed('alpha'));
  await applyObject(admin(), ns, objectNamed('beta'));
  const { inf, events, client } = informer(ns);
  inf.start();
  await inf.synced();
  inf.stop();
  events.length = 0;

  // AND while it was away: one object edited, one deleted, one added; then the API server restarted, so its watch
  // cache starts after those changes and no longer has the informer's resourceVersion
  await applyObject(
    admin(),
    ns,
    objectNamed('alpha', (r) => (r.spec.pool.maxSize = 22)),
  );
  await admin().request('DELETE', objectPath(ns, 'beta'));
  await applyObject(admin(), ns, objectNamed('gamma'));
  await api().restartApiServer();
  // The server says so itself: a watch from a version older than its cache is 410 Gone.
  // (A freshly started server answers 429 until its watch cache is initialized: asked again then.)
  const stale = new URLSearchParams({ watch: 'true', resourceVersion: '1' });
  let code: number | undefined;
  for (let i = 0; i < 100 && (code === undefined || code === 429); i++) {
    if (code === 429) await new Promise((r) => setTimeout(r, 200));
    const answer = await new Promise<unknown>((resolve) => {
      const ac = new AbortController();
      client
        .stream(
          `${collectionPath(ns)}?${stale.toString()}`,
          (l) => {
            resolve(l);
            ac.abort();
          },
          ac.signal,
        )
        .catch(resolve);
    });
    code = answer instanceof KubeApiError ? answer.statusCode : (answer as { object?: { code?: number } }).object?.code;
  }
  expect(code).toBe(410);

  // WHEN the informer resumes from its old resourceVersion
  inf.start();

  // THEN it is told 410, lists again, and delivers the edit, the deletion and the addition
  await eventually(() => events.length >= 3, 'the missed changes are delivered');
  expect(inf.stats.relistsAfterGone).toBeGreaterThanOrEqual(1);
  expect(events).toEqual(
    expect.arrayContaining([
      ['MODIFIED', 'alpha', 22],
      ['DELETED', 'beta', 30],
      ['ADDED', 'gamma', 30],
    ]),
  );
  expect([...inf.items.keys()].sort()).toEqual([`${ns}/alpha`, `${ns}/gamma`]);
  inf.stop();
  client.close();
});

test("the store's watch does not wake the daemon with the echo of its own status write; another writer's edit does", async () => {
  // GIVEN a Kubernetes store whose watch is running over one object
  const ns = await namespace();
  await applyObject(admin(), ns, objectNamed('alpha'));
  const store = new KubernetesStore({
    client: KubeClient.fromOptions({ kubeconfig: api().kubeconfig }),
    namespace: ns,
  });
  const seen: string[] = [];
  const stop = store.watch((name) => seen.push(name));
  await store.sync();
  await new Promise((r) => setTimeout(r, 500));
  seen.length = 0;

  // WHEN the store writes a status (as the reconciler does), and a moment passes for the watch event
  const read = (await store.get('alpha'))!;
  await store.writeStatus(
    'alpha',
    {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'UpToDate',
          message: 'm',
          lastTransitionTime: '2024-01-01T00:00:00.000Z',
          observedGeneration: 1,
        },
      ],
    },
    read.resourceVersion,
  );
  await new Promise((r) => setTimeout(r, 1500));

  // THEN nobody was woken (the cache already had that version), and the cache has it
  expect(seen).toEqual([]);
  expect((await store.get('alpha'))!.status?.conditions[0].reason).toBe('UpToDate');

  // WHEN a user edits the spec, THEN the watch wakes with its name
  await applyObject(
    admin(),
    ns,
    objectNamed('alpha', (r) => (r.spec.pool.maxSize = 23)),
  );
  await eventually(() => seen.includes('alpha'), 'the edit wakes the watcher');
  stop();
  store.close();
});
