import { ClusterStatus } from '../cluster/schema/status';
import { Problem, WorkerStacksError } from '../../core/errors';

/** One cluster object as a store holds it: the raw object (validated later, by the reconciler) and its status. */
export interface ClusterRecord {
  /** metadata.name (for the file store: the file's base name). */
  readonly name: string;
  /** Where it lives, for messages (`clusters/prod-eu1.yaml`, or a Kubernetes object path). */
  readonly source: string;
  /** The Kubernetes store's namespace of the object (its rollout policies are those of that namespace). @default none */
  readonly namespace?: string;
  /** The parsed object, or undefined when it cannot even be parsed. */
  readonly raw?: unknown;
  /** Problems that stop parsing (YAML syntax). Schema validation is the reconciler's first task. */
  readonly parseProblems: readonly Problem[];
  /** Bumped by the store whenever the spec changes. */
  readonly generation: number;
  readonly status?: ClusterStatus;
  /** Opaque version of this record; a status write must name it (optimistic concurrency). */
  readonly resourceVersion: string;
  /** The latest retry an operator asked for (`worker-stacks retry`), if any: an opaque token. */
  readonly retryRequest?: string;
  /** Identity of the object's content (SHA-256 of its stored bytes): equal hashes, equal objects. @default unknown */
  readonly contentHash?: string;
  /** The object is being deleted and held by finalizers (Kubernetes' deletionTimestamp). @default false */
  readonly deletionRequested?: boolean;
  /** The object's finalizers. @default none */
  readonly finalizers?: readonly string[];
}

/**
 * Where cluster objects live. The file store is the embedded default; a
 * Kubernetes store (custom resources, status subresource, resourceVersion)
 * implements the same contract.
 */
export interface ClusterStore {
  /** Every cluster object, fresh from the source (level-based: no cached state). */
  list(): Promise<ClusterRecord[]>;
  get(name: string): Promise<ClusterRecord | undefined>;
  /** Replaces the status if the record is still at `resourceVersion`; returns the new version. Throws ConflictError otherwise. */
  writeStatus(name: string, status: ClusterStatus, resourceVersion: string): Promise<string>;
  /** Removes the status (after an explicit delete). */
  clearStatus(name: string, resourceVersion: string): Promise<void>;
  /** An operator asks the reconciler to retry a stalled cluster (`worker-stacks retry`): sets a new retry token. */
  requestRetry(name: string, token: string): Promise<void>;
  /** Sets `spec.paused` on the object (`worker-stacks pause|resume`). */
  setPaused(name: string, paused: boolean): Promise<void>;
  /** Adds or removes a finalizer on the object (stores whose deletions can be held: Kubernetes). @default not supported */
  setFinalizer?(name: string, finalizer: string, present: boolean): Promise<void>;
  /** Calls `onChange(name)` when an object may have changed. Returns a stop function. */
  watch(onChange: (name: string) => void): () => void;
}

/** Someone else wrote the record since it was read: re-read and try again. */
export class ConflictError extends WorkerStacksError {
  constructor(name: string, expected: string, actual: string) {
    super(`status of ${name} changed underneath (expected version ${expected}, found ${actual})`, {
      hint: 'another writer updated it; the reconciler re-reads and retries on its next pass',
    });
  }
}
