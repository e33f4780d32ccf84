import { Problem } from '../../core/errors';
import { fromKubeStatus } from '../../platform/kube/printer-status';
import { KubeWorkerCluster, shownName, toRecord } from '../../platform/kube/resource';
import { ClusterRecord } from '../../model/ports/cluster-store';

/*
 * A name that WorkerClusters in several namespaces share (the Kubernetes store with every namespace watched). A
 * daemon keys its clusters by name (status, slots, metrics, `worker-stacks retry <name>`), so one object holds the
 * name and the others are refused. Which one holds it must not be a race a newcomer can win: a namespace editor who
 * creates `team-b/prod-eu1` must not stall team A's running `team-a/prod-eu1`. So the holder is the object whose
 * status records a stack (it has deployed one; only the reconciler writes status), else the oldest object
 * (creationTimestamp, then namespace). The others are records of their own, keyed `<namespace>/<name>`, refused
 * (Stalled InvalidSpec, naming the holder): each says why on its own object, and nothing of it reaches AWS.
 *
 * The stack itself is guarded apart from this (lib/engines/reconciler/tasks/claim.ts): its owner tag names one
 * object, so even a daemon that never sees the holder (another shard, another management cluster) writes nothing to it.
 */

/** The object that holds a name several objects share. */
export function holderOf(same: readonly KubeWorkerCluster[]): KubeWorkerCluster {
  const deployed = (o: KubeWorkerCluster) => (deployedBy(o) ? 0 : 1);
  const created = (o: KubeWorkerCluster) => o.metadata.creationTimestamp ?? '9999';
  return [...same].sort(
    (a, b) =>
      deployed(a) - deployed(b) ||
      created(a).localeCompare(created(b)) ||
      (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? ''),
  )[0];
}

/** A refused object's record key: `<namespace>/<name>` (no cluster name has a slash). */
export function refusedKey(o: KubeWorkerCluster): string {
  return shownName(o).replace(/^\//, '');
}

/** A record key as the store reads it: the name, and the namespace of a refused object. */
export function parseKey(key: string): { readonly name: string; readonly namespace?: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export function duplicateProblem(o: KubeWorkerCluster, holder: KubeWorkerCluster): Problem {
  const name = o.metadata.name;
  const why = deployedBy(holder) ? 'which has deployed its stack' : 'which is older';
  return {
    file: `workercluster ${shownName(o)}`,
    path: 'metadata.name',
    message: `${name} is held by the WorkerCluster ${shownName(holder)} (${why}): a daemon reconciles one object of a name, so this one is refused and nothing of it reaches AWS; rename it, or have each namespace reconciled by its own shard (even then a stack belongs to one object: its tag worker-stacks.io/owner)`,
  };
}

function deployedBy(o: KubeWorkerCluster): boolean {
  const read = o.status ? fromKubeStatus(o.status) : undefined;
  return Boolean(read && 'status' in read && read.status.stackId);
}

/** The records of the objects of one name: the holder's under the name, each other one refused under its own key. */
export function recordsOfName(same: readonly KubeWorkerCluster[]): ClusterRecord[] {
  if (same.length === 1) return [toRecord(same[0])];
  const holder = holderOf(same);
  return same.map((o) =>
    o === holder ? toRecord(o) : { ...toRecord(o, [duplicateProblem(o, holder)]), name: refusedKey(o) },
  );
}

/** The object a record key names, among the objects of its name: a refused one by its namespace, else the holder. */
export function objectOfKey(key: string, same: readonly KubeWorkerCluster[]): KubeWorkerCluster | undefined {
  const { namespace, name } = parseKey(key);
  const named = same.filter((o) => o.metadata.name === name);
  if (namespace === undefined) return named.length ? holderOf(named) : undefined;
  const o = named.find((x) => x.metadata.namespace === namespace);
  // A key of a refused object names it only while it is refused (the holder is reached by the name alone).
  return o && named.length > 1 && holderOf(named) !== o ? o : undefined;
}
