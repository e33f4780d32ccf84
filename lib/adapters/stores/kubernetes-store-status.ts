import { ClusterStatus } from '../../model/cluster/schema/status';
import { KubeApiError, WorkerStacksError } from '../../core/errors';
import { KubeWorkerCluster, namespaceOf, objectPath } from '../../platform/kube/resource';
import { toKubeStatus } from '../../platform/kube/printer-status';
import { ConflictError } from '../../model/ports/cluster-store';
import { KubeClient } from '../../platform/kube/client';

// The Kubernetes store's status write of one object, apart from its reads and its user commands: the write goes to
// the status subresource only, at the resourceVersion the status was computed for, so a 409 is a ConflictError the
// reconciler answers with a fresh read (the key may name another object than when it was read: its version differs).

/** What a status write needs of the store: its reads, and its cache (which learns each object as written). */
export interface StatusWriter {
  readonly client: KubeClient;
  /** The object a record key names (kubernetes-duplicates.ts objectOfKey). */
  locate(key: string): Promise<KubeWorkerCluster>;
  /** The store's cache learns an object as written. */
  observe(o: KubeWorkerCluster): void;
}

/** Replaces the status (PUT), or removes it (a merge patch to null), in both cases only at `resourceVersion`. */
export async function putStatus(
  io: StatusWriter,
  name: string,
  status: ClusterStatus | undefined,
  resourceVersion: string,
): Promise<string> {
  // The object the key names now: at another version than the one read (another object, or a newer one), the write is
  // refused by the API server (409), and the reconciler reads again.
  const o = await io.locate(name);
  const path = objectPath(namespaceOf(o), o.metadata.name, 'status');
  const metadata = { name: o.metadata.name, namespace: o.metadata.namespace, resourceVersion };
  try {
    const { body: updated } = status
      ? // With the short checksum prefixes the printer columns of `kubectl get wc` show (dropped again on read).
        await io.client.request<KubeWorkerCluster>('PUT', path, {
          apiVersion: o.apiVersion,
          kind: o.kind,
          metadata,
          status: toKubeStatus(status),
        })
      : await io.client.request<KubeWorkerCluster>(
          'PATCH',
          path,
          { metadata: { resourceVersion }, status: null },
          'application/merge-patch+json',
        );
    io.observe(updated);
    const version = updated.metadata.resourceVersion;
    if (version === undefined)
      throw new WorkerStacksError(`the API server answered the status write of ${name} without a resourceVersion`, {
        hint: 'check the API server version; the reconciler re-reads and retries',
      });
    return version;
  } catch (e) {
    if (e instanceof KubeApiError && e.statusCode === 409)
      throw new ConflictError(name, resourceVersion, 'a newer version');
    throw e;
  }
}
