import { ClusterStatus } from '../../model/cluster/schema/status';

/**
 * The file store's state file, one per cluster beside the objects: its shape, the opaque version a record carries,
 * what of the parsed object is kept, and the reading of status files older versions wrote.
 */

/** What the store keeps per cluster beside the object. */
export interface StateFile {
  readonly resourceVersion: number;
  readonly generation: number;
  /** Hash of the spec the generation belongs to. */
  readonly specHash?: string;
  readonly status?: ClusterStatus;
  /** SHA-256 of the object file's bytes when `object` was parsed from it. */
  readonly contentHash?: string;
  /** The object as parsed from those bytes: a new process reads it instead of parsing the YAML again. */
  readonly object?: unknown;
}

/** The parsed object to keep in the state file, when JSON holds it exactly (YAML's .inf or .nan would not survive). */
export function storable(contentHash: string, raw: unknown): Pick<StateFile, 'contentHash' | 'object'> {
  return isJsonExact(raw) ? { contentHash, object: raw } : { contentHash: undefined, object: undefined };
}

function isJsonExact(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(isJsonExact);
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype)
    return Object.values(v).every(isJsonExact);
  return false;
}

/** Shared between passes, so nobody may change it. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** What the file store's opaque resourceVersion carries: the state file's version and what the record was read as. */
export interface Revision {
  readonly v: number;
  readonly generation: number;
  readonly specHash?: string;
  readonly contentHash?: string;
}

export function encodeRevision(r: Revision): string {
  return [r.v, r.generation, r.specHash ?? '', r.contentHash ?? ''].join(':');
}

export function decodeRevision(s: string): Revision {
  const [v, generation, specHash, contentHash] = s.split(':');
  return {
    v: Number(v),
    generation: Number(generation) || 1,
    specHash: specHash || undefined,
    contentHash: contentHash || undefined,
  };
}

/** Status files written before the status schema kept the reconciler's bookkeeping under `controller`. */
const LEGACY_BOOKKEEPING = [
  'inputsFingerprint',
  'appliedInputsKey',
  'failures',
  'failedFingerprint',
  'retryAfter',
  'recoveryAttempts',
  'configDigests',
];

export function migrateLegacyStatus(status: unknown): unknown {
  if (!status || typeof status !== 'object') return status;
  const all = { ...(status as Record<string, unknown>) };
  const moved = Object.fromEntries(LEGACY_BOOKKEEPING.filter((k) => k in all).map((k) => [k, all[k]]));
  if (Object.keys(moved).length === 0) return all;
  const s = Object.fromEntries(Object.entries(all).filter(([k]) => !(k in moved)));
  // Conditions of the old Failed type say nothing the new types do not: dropped, the next pass sets Degraded/Stalled.
  if (Array.isArray(s.conditions))
    s.conditions = (s.conditions as Array<{ type?: string }>).filter((c) => c.type !== 'Failed');
  return { ...s, controller: { ...(s.controller as object), ...moved } };
}
