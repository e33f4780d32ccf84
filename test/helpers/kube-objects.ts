import { KubeApiError } from '../../lib/core/errors';
import { KubeClient } from '../../lib/platform/kube/client';
import { collectionPath, KubeWorkerCluster, objectPath } from '../../lib/platform/kube/resource';
import { UserObject } from '../adapters/stores/store-contract';

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
      return (
        await client.request<KubeWorkerCluster>('PUT', objectPath(namespace, raw.metadata.name), {
          ...body,
          metadata: { ...cur.metadata, labels: raw.metadata.labels, annotations: cur.metadata.annotations },
        })
      ).body;
    } catch (e) {
      if (!(e instanceof KubeApiError && e.statusCode === 409)) throw e;
    }
  }
}
