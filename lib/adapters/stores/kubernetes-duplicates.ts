import { canonicalJson } from '../../model/cloudconfig/canonical-json';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { ClusterStatus, EMPTY_STATUS, setConditions } from '../../model/cluster/status';
import { Problem } from '../../core/errors';
import { fromKubeStatus } from '../../platform/kube/printer-status';
import { KubeWorkerCluster, shownName, toRecord } from '../../platform/kube/resource';
import { ClusterRecord } from '../../model/ports/cluster-store';

/**
 * A name that WorkerClusters in several namespaces share (the Kubernetes store with every namespace watched): both
 * would deploy the one stack WorkerStack-<name>, so the store makes them ONE record, refused, and writes the refusal
 * onto each object (lib/adapters/stores/kubernetes-store.ts).
 */

/** The status a refusal written for the name gives one of its objects: its own, with the conditions at its generation. */
export function duplicateStatus(
  o: KubeWorkerCluster,
  status: ClusterStatus,
): { own: ClusterStatus; mine: ClusterStatus } {
  const read = o.status ? fromKubeStatus(o.status) : { status: EMPTY_STATUS };
  const own = 'status' in read ? read.status : EMPTY_STATUS;
  const generation = o.metadata.generation ?? 1;
  return {
    own,
    mine: {
      ...own,
      observedGeneration: generation,
      conditions: setConditions(own.conditions, status.conditions, generation, new Date()),
    },
  };
}

export function duplicateProblem(same: readonly KubeWorkerCluster[]): Problem {
  const name = same[0].metadata.name;
  const namespaces = same.map((o) => o.metadata.namespace ?? '').sort();
  return {
    file: `workercluster ${same.map(shownName).sort().join(', ')}`,
    path: 'metadata.name',
    message: `${name} is the name of a WorkerCluster in each of the namespaces ${namespaces.join(', ')}: they would all deploy the one stack WorkerStack-${name}, so every one of them is refused; rename or delete all but one (names are unique across the namespaces a daemon watches)`,
  };
}

export function conditionStates(s: ClusterStatus): string {
  return JSON.stringify(s.conditions.map((c) => [c.type, c.status, c.reason]).sort());
}

/** The resourceVersion of a duplicated name's record: `duplicates:` and each object's `namespace/name=version`. */
export const DUPLICATES = 'duplicates:';

export function compositeVersion(entries: readonly (readonly [string, string])[]): string {
  return DUPLICATES + JSON.stringify([...entries].sort(([a], [b]) => a.localeCompare(b)));
}

export function parseComposite(v: string): Map<string, string> {
  try {
    return new Map(JSON.parse(v.slice(DUPLICATES.length)) as [string, string][]);
  } catch {
    return new Map();
  }
}

/**
 * One record for a name several objects have: invalid (its problem names every namespace), no spec (nothing of it
 * may reach AWS), a generation that grows with an edit to any of them, and no status of its own (each object keeps
 * its own; the write of the refusal goes to each).
 */
export function duplicatesRecord(same: readonly KubeWorkerCluster[]): ClusterRecord {
  const records = same.map((o) => toRecord(o));
  return {
    name: same[0].metadata.name,
    source: `workercluster ${same.map(shownName).sort().join(', ')}`,
    parseProblems: [duplicateProblem(same)],
    generation: same.reduce((sum, o) => sum + (o.metadata.generation ?? 1), 0),
    resourceVersion: compositeVersion(same.map((o) => [shownName(o), o.metadata.resourceVersion ?? ''] as const)),
    contentHash: sha256Hex(canonicalJson(records.map((r) => r.contentHash ?? '').sort())),
  };
}
