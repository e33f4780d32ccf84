import { KubeApiError } from '../../lib/core/errors';
import { KubeClient } from '../../lib/platform/kube/client';
import { CRD_NAME, workerClusterCrd } from '../../lib/platform/kube/crd';
import { POLICY_CRD_NAME, rolloutPolicyCrd } from '../../lib/platform/kube/policy-crd';
import { CHANNEL_CRD_NAME, imageChannelCrd } from '../../lib/platform/kube/channel-crd';
import { channelCollectionPath } from '../../lib/platform/kube/channel-resource';
import { policyCollectionPath } from '../../lib/platform/kube/policy-resource';
import { collectionPath } from '../../lib/platform/kube/resource';
import { KubeApiServer, startKubeApiServer } from './kube-apiserver';

/** The CRDs the store tests install: the generated ones (lib/platform/kube/crd.ts, policy-crd.ts, channel-crd.ts), CEL rules and all. */
export { workerClusterCrd };

/**
 * Installs the generated CRDs (lib/platform/kube/crd.ts and policy-crd.ts, what `worker-stacks crd` prints: WorkerCluster and
 * WorkerRolloutPolicy, as deploy/ has them) and waits until both are served.
 */
export async function installCrd(admin: KubeClient): Promise<void> {
  await installOne(admin, workerClusterCrd(), CRD_NAME, collectionPath('default'));
  await installOne(admin, rolloutPolicyCrd(), POLICY_CRD_NAME, policyCollectionPath('default'));
  await installOne(admin, imageChannelCrd(), CHANNEL_CRD_NAME, channelCollectionPath('default'));
}

async function installOne(admin: KubeClient, crd: object, name: string, served: string): Promise<void> {
  try {
    await admin.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  } catch (e) {
    if (!(e instanceof KubeApiError && e.statusCode === 409)) throw e;
  }
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { body } = await admin.request<{ status?: { conditions?: { type: string; status: string }[] } }>(
      'GET',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
    );
    if (body.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) {
      // Established can precede the discovery of the new resource by a moment: wait until a list answers.
      try {
        await admin.request('GET', `${served}?limit=1`);
        return;
      } catch {
        // not served yet
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`CRD ${name} was not established within 30 s`);
}

/** A real API server with the CRD installed and an admin client: what every test of the Kubernetes store starts from. */
export interface KubeWithCrd {
  readonly api: KubeApiServer;
  readonly admin: KubeClient;
  /** Creates a namespace and returns its name. */
  namespace(name: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startKubeWithCrd(): Promise<KubeWithCrd> {
  const api = await startKubeApiServer();
  const admin = KubeClient.fromOptions({ kubeconfig: api.kubeconfig });
  await installCrd(admin);
  return {
    api,
    admin,
    namespace: async (name) => {
      await admin.request('POST', '/api/v1/namespaces', { metadata: { name } });
      return name;
    },
    stop: async () => {
      admin.close();
      await api.stop();
    },
  };
}

/**
 * One API server with the CRDs for a whole test file: started before its first test, stopped after its last. Read
 * `.current` inside tests and hooks (it is there from the file's beforeAll on).
 */
export function kubeForFile(): { readonly current: KubeWithCrd } {
  let kube: KubeWithCrd | undefined;
  beforeAll(async () => {
    kube = await startKubeWithCrd();
  }, 120_000);
  afterAll(async () => {
    await kube?.stop();
  });
  return {
    get current(): KubeWithCrd {
      if (!kube) throw new Error('kubeForFile: the API server is not started (use it inside tests and hooks)');
      return kube;
    },
  };
}
