import { DEFAULT_POOL } from './pools';
import { Loose, obj } from '../rules/loose';

/**
 * The pools of a raw (unvalidated) object, each with the field path its problems are reported at: the cross-field
 * rules (pool-rules.ts, rollout-rules.ts) apply the same checks to `spec.pool` and to each `spec.pools[i]`, and still
 * report while other fields have type errors.
 */

export interface RawPool {
  /** The pool as written (an empty object when it is not an object: the schema says so). */
  readonly pool: Loose;
  /** `spec.pool` or `spec.pools[i]`. */
  readonly at: string;
  /** Its name: `default` for spec.pool, spec.pools[i].name when it is a string. */
  readonly name?: string;
}

/** spec.pool (the pool named default) and every item of spec.pools, in that order; both when both are given. */
export function rawPools(spec: Loose): RawPool[] {
  const out: RawPool[] = [];
  if (spec.pool !== undefined) out.push({ pool: obj(spec.pool), at: 'spec.pool', name: DEFAULT_POOL });
  if (Array.isArray(spec.pools))
    spec.pools.forEach((raw, i) => {
      const pool = obj(raw);
      out.push({ pool, at: `spec.pools[${i}]`, name: typeof pool.name === 'string' ? pool.name : undefined });
    });
  return out;
}

/**
 * The pools an object as read names that have stacks of their own (spec.pools but `default`, which lives in the
 * shared stack): read before validation, since a deleted or fast-pathed object is not validated.
 */
export function rawPoolNames(raw: unknown): string[] {
  const pools = (raw as { spec?: { pools?: unknown } } | undefined)?.spec?.pools;
  if (!Array.isArray(pools)) return [];
  return pools.flatMap((p: unknown) => {
    const name = (p as { name?: unknown } | null)?.name;
    return typeof name === 'string' && name !== DEFAULT_POOL ? [name] : [];
  });
}
