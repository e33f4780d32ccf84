import { KubeClient } from '../../lib/kube/client';
import { KubeApiError } from '../../lib/errors';
import { CRD_GROUP, CRD_PLURAL, CRD_VERSION } from '../../lib/kube/resource';
import { workerClusterCrd } from '../../lib/kube/crd';

/** The WorkerCluster CRD the store tests install: the generated one (lib/kube/crd.ts), CEL rules and all. */
export { workerClusterCrd };

/** Creates the CRD (admin client) and waits until the API server serves it. */
export async function installCrd(admin: KubeClient): Promise<void> {
  const crd = workerClusterCrd();
  const name = (crd.metadata as { name: string }).name;
  try {
    await admin.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  } catch (e) {
    if (!(e instanceof KubeApiError && e.statusCode === 409)) throw e;
  }
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { body } = await admin.request<{ status?: { conditions?: { type: string; status: string }[] } }>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    if (body.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) {
      // Established can precede the discovery of the new resource by a moment: wait until a list answers.
      try {
        await admin.request('GET', `/apis/${CRD_GROUP}/${CRD_VERSION}/${CRD_PLURAL}?limit=1`);
        return;
      } catch {
        // not served yet
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`CRD ${name} was not established within 30 s`);
}
