import { KubeClient } from '../../lib/kube/client';
import { objectPath } from '../../lib/kube/resource';
import { KubernetesStore } from '../../lib/stores/kubernetes-store';
import { KubeApiServer } from '../helpers/kube-apiserver';
import { kubeForFile } from '../helpers/kube-crd';
import { applyObject } from '../helpers/kube-objects';
import { storeContract, UserObject } from './store-contract';

/**
 * The Kubernetes store under the store contract, against a real kube-apiserver and etcd: a user creates and
 * replaces WorkerCluster objects (as `kubectl apply` does) and deletes them. Each test gets its own namespace.
 */
const kube = kubeForFile();
const api = (): KubeApiServer => kube.current.api;
const admin = (): KubeClient => kube.current.admin;
let n = 0;

storeContract('kubernetes', async () => {
  const namespace = `contract-${++n}`;
  await kube.current.namespace(namespace);
  const client = KubeClient.fromOptions({ kubeconfig: api().kubeconfig });
  const store = new KubernetesStore({ client, namespace });
  return {
    store,
    put: async (raw: UserObject) => void (await applyObject(admin(), namespace, raw)),
    remove: async (name: string) => void (await admin().request('DELETE', objectPath(namespace, name))),
    async dispose() {
      store.close();
      await admin().request('DELETE', `/api/v1/namespaces/${namespace}`);
    },
  };
});
