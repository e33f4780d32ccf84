import { KubeApiError } from '../../lib/errors';
import { KubeClient } from '../../lib/kube/client';
import { collectionPath, KubeWorkerCluster, objectPath } from '../../lib/kube/resource';
import { KubernetesStore } from '../../lib/stores/kubernetes-store';
import { KubeApiServer, startKubeApiServer } from '../helpers/kube-apiserver';
import { installCrd } from '../helpers/kube-crd';
import { storeContract, UserObject } from './store-contract';

/**
 * The Kubernetes store under the store contract, against a real kube-apiserver and etcd: a user creates and
 * replaces WorkerCluster objects (as `kubectl apply` does) and deletes them. Each test gets its own namespace.
 */
let api: KubeApiServer;
let admin: KubeClient;
let n = 0;
beforeAll(async () => {
  api = await startKubeApiServer();
  admin = KubeClient.fromOptions({ kubeconfig: api.kubeconfig });
  await installCrd(admin);
}, 120_000);
afterAll(async () => {
  admin?.close();
  await api?.stop();
});

/** Creates, or replaces keeping the status (the object's status is the reconciler's, not the user's). */
export async function applyObject(client: KubeClient, namespace: string, raw: UserObject): Promise<KubeWorkerCluster> {
  const body = { ...raw, metadata: { ...raw.metadata, namespace } };
  try {
    return (await client.request<KubeWorkerCluster>('POST', collectionPath(namespace), body)).body;
  } catch (e) {
    if (!(e instanceof KubeApiError && e.statusCode === 409)) throw e;
  }
  for (;;) {
    const { body: cur } = await client.request<KubeWorkerCluster>('GET', objectPath(namespace, raw.metadata.name));
    try {
      return (await client.request<KubeWorkerCluster>('PUT', objectPath(namespace, raw.metadata.name), { ...body, metadata: { ...cur.metadata, labels: raw.metadata.labels, annotations: cur.metadata.annotations } })).body;
    } catch (e) {
      if (!(e instanceof KubeApiError && e.statusCode === 409)) throw e;
    }
  }
}

storeContract('kubernetes', async () => {
  const namespace = `contract-${++n}`;
  await admin.request('POST', '/api/v1/namespaces', { metadata: { name: namespace } });
  const client = KubeClient.fromOptions({ kubeconfig: api.kubeconfig });
  const store = new KubernetesStore({ client, namespace });
  return {
    store,
    put: async (raw: UserObject) => void (await applyObject(admin, namespace, raw)),
    remove: async (name: string) => void (await admin.request('DELETE', objectPath(namespace, name))),
    async dispose() {
      store.close();
      await admin.request('DELETE', `/api/v1/namespaces/${namespace}`);
    },
  };
});
