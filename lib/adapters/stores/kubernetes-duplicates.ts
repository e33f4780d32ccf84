import { canonicalJson } from '../../model/cloudconfig/canonical-json';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { ClusterStatus, EMPTY_STATUS, setConditions } from '../../model/cluster/status';
import { KubeApiError, Problem } from '../../core/errors';
import { KubeClient } from '../../platform/kube/client';
import { fromKubeStatus, toKubeStatus } from '../../platform/kube/printer-status';
import { KubeWorkerCluster, namespaceOf, objectPath, shownName, toRecord } from '../../platform/kube/resource';
import { ClusterRecord, ConflictError } from '../../model/ports/cluster-store';

/**
 * A name that WorkerClusters in several namespaces share (the Kubernetes store with every namespace watched): both
 * would deploy the one stack WorkerStack-<name>, so the store (lib/adapters/stores/kubernetes-store.ts) makes them ONE
 * record, refused, and writes the refusal onto each object (putDuplicatesStatus).
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

/** What the status write of a duplicated name needs of the store. */
export interface DuplicatesWriter {
  readonly client: KubeClient;
  /** Every object of the name, as the store reads them. */
  objects(name: string): Promise<KubeWorkerCluster[]>;
  /** The store's cache learns an object as written. */
  observe(o: KubeWorkerCluster): void;
}

/**
 * The status of a duplicated name, onto each of its objects: the conditions written (Stalled InvalidSpec, naming
 * the namespaces) at that object's own generation, its other fields (its stack, the controller's bookkeeping) kept.
 * An object already so is not written again. Returns the new composite version, and the objects whose conditions
 * changed (the events of the write go to them).
 */
export async function putDuplicatesStatus(
  io: DuplicatesWriter,
  name: string,
  status: ClusterStatus,
  composite: string,
): Promise<{ version: string; changed: ReadonlySet<string> }> {
  const versions = parseComposite(composite);
  const objs = (await io.objects(name)).filter((o) => o.metadata.name === name);
  const current = new Map(objs.map((o) => [shownName(o), o]));
  if (
    objs.length < 2 ||
    [...versions.keys()].some((k) => current.get(k)?.metadata.resourceVersion !== versions.get(k)) ||
    versions.size !== objs.length
  ) {
    throw new ConflictError(name, composite, 'another set of objects of that name');
  }
  const changed = new Set<string>();
  const next: [string, string][] = [];
  for (const o of objs.sort((a, b) => shownName(a).localeCompare(shownName(b)))) {
    const { own, mine } = duplicateStatus(o, status);
    if (JSON.stringify(mine) === JSON.stringify(own)) {
      next.push([shownName(o), o.metadata.resourceVersion ?? '']);
      continue;
    }
    const path = objectPath(namespaceOf(o), name, 'status');
    try {
      const { body } = await io.client.request<KubeWorkerCluster>('PUT', path, {
        apiVersion: o.apiVersion,
        kind: o.kind,
        metadata: { name, namespace: o.metadata.namespace, resourceVersion: o.metadata.resourceVersion },
        status: toKubeStatus(mine),
      });
      io.observe(body);
      // The events of this write are news to this object only when a condition changed status or reason (as
      // lib/engines/reconciler/workflow/events.ts decides for one object); a new generation still refused is not.
      if (conditionStates(own) !== conditionStates(mine)) changed.add(shownName(o));
      next.push([shownName(o), body.metadata.resourceVersion ?? '']);
    } catch (e) {
      if (e instanceof KubeApiError && e.statusCode === 409)
        throw new ConflictError(name, composite, 'a newer version of one of them');
      throw e;
    }
  }
  return { version: compositeVersion(next), changed };
}
