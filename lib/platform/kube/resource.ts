import { canonicalJson } from '../../model/cloudconfig/canonical-json';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { API_VERSION, KIND } from '../../model/cluster/schema/schema';
import { ClusterStatus } from '../../model/cluster/schema/status';
import { Problem, WorkerStacksError } from '../../core/errors';
import { ClusterRecord } from '../../model/ports/cluster-store';
import { GROUP, PLURAL, VERSION } from './crd';
import { fromKubeStatus } from './printer-status';

/** The custom resource: `workerclusters.worker-stacks.io`, namespaced, served at v1alpha1 (lib/platform/kube/crd.ts). */
export const CRD_GROUP = GROUP;
export const CRD_VERSION = VERSION;
export const CRD_PLURAL = PLURAL;

/** `worker-stacks retry` writes a new token here: a user's request, never the daemon's. */
export const RETRY_ANNOTATION = 'worker-stacks.io/retry';
/** Held while `spec.deletionPolicy: Delete` has a stack to delete. */
export const STACK_FINALIZER = 'worker-stacks.io/stack';

/** The object metadata worker-stacks reads, of any of its kinds. */
export interface KubeObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  labels?: Record<string, string>;
  /** RFC 3339, whole seconds (which of two objects of one name is older: lib/adapters/stores/kubernetes-duplicates.ts). */
  creationTimestamp?: string;
}

/** A WorkerCluster as the API server returns it (only the fields the store reads). */
export interface KubeWorkerCluster {
  apiVersion?: string;
  kind?: string;
  metadata: KubeObjectMeta & {
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
  };
  spec?: Record<string, unknown>;
  status?: unknown;
}

/** The collection path, in one namespace or all. */
export function collectionPath(namespace: string | undefined): string {
  return namespace
    ? `/apis/${CRD_GROUP}/${CRD_VERSION}/namespaces/${encodeURIComponent(namespace)}/${CRD_PLURAL}`
    : `/apis/${CRD_GROUP}/${CRD_VERSION}/${CRD_PLURAL}`;
}

export function objectPath(namespace: string, name: string, sub = ''): string {
  return `${collectionPath(namespace)}/${encodeURIComponent(name)}${sub ? `/${sub}` : ''}`;
}

/** The namespace of an object read from the API server (WorkerClusters are namespaced: it always has one). */
export function namespaceOf(o: KubeWorkerCluster): string {
  const ns = o.metadata.namespace;
  if (ns === undefined)
    throw new WorkerStacksError(`WorkerCluster ${o.metadata.name} came without a namespace`, {
      hint: 'WorkerClusters are namespaced: reinstall the CRD (worker-stacks crd | kubectl apply -f -)',
    });
  return ns;
}

/** `namespace/name`, how messages name an object (kubectl's notation). */
export function shownName(o: KubeWorkerCluster): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/**
 * The store's record of a custom resource. `raw` is the object as the file format has it (apiVersion, kind, name,
 * generation, labels, spec): the API server's own metadata (uid, managedFields, annotations such as kubectl's
 * last-applied copy) is not part of the cluster object and would only make its schema refuse it. The generation and
 * the resourceVersion are the API server's.
 */
export function toRecord(o: KubeWorkerCluster, extraProblems: readonly Problem[] = []): ClusterRecord {
  const source = `workercluster ${shownName(o)}`;
  const raw = {
    apiVersion: o.apiVersion ?? API_VERSION,
    kind: o.kind ?? KIND,
    metadata: {
      name: o.metadata.name,
      generation: o.metadata.generation ?? 1,
      ...(o.metadata.labels ? { labels: o.metadata.labels } : {}),
    },
    spec: o.spec ?? {},
  };
  const problems: Problem[] = [...extraProblems];
  let status: ClusterStatus | undefined;
  if (o.status !== undefined && o.status !== null && Object.keys(o.status).length > 0) {
    const checked = fromKubeStatus(o.status);
    // A status another version (or a hand edit) wrote that this one cannot read: rebuilt from the live stack.
    if ('status' in checked) status = checked.status;
  }
  return {
    name: o.metadata.name,
    source,
    ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
    raw,
    parseProblems: problems,
    generation: o.metadata.generation ?? 1,
    status,
    resourceVersion: o.metadata.resourceVersion ?? '',
    retryRequest: o.metadata.annotations?.[RETRY_ANNOTATION] || undefined,
    contentHash: sha256Hex(canonicalJson(raw)),
    ...(o.metadata.deletionTimestamp ? { deletionRequested: true } : {}),
    ...(o.metadata.finalizers?.length ? { finalizers: o.metadata.finalizers } : {}),
  };
}
