import { KubeClient } from '../../lib/kube/client';
import { objectPath } from '../../lib/kube/resource';
import { KubernetesStore } from '../../lib/stores/kubernetes-store';
import { KubeApiServer } from '../helpers/kube-apiserver';
import { KubeWithCrd, startKubeWithCrd } from '../helpers/kube-crd';
import { applyObject } from '../helpers/kube-objects';
import { storeContract, UserObject } from './store-contract';

/**
 * The Kubernetes store under the store contract, against a real kube-apiserver and etcd: a user creates and
 * replaces WorkerCluster objects (as `kubectl apply` does) and deletes them. Each test gets its own namespace.
 */
let kube: KubeWithCrd;
let api: KubeApiServer;
let admin: KubeClient;
let n = 0;
beforeAll(async () => {
  kube = await startKubeWithCrd();
  ({ api, admin } = kube);
}, 120_000);
afterAll(async () => {
  await kube?.stop();
});

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
