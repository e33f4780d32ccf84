export interface BackoffPolicy {
  /** First retry delay. @default 30 s */
  readonly baseMs: number;
  /** Cap. @default 15 min */
  readonly maxMs: number;
  /** Source of randomness for jitter, [0,1). @default Math.random */
  readonly random: () => number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 30_000, maxMs: 15 * 60_000, random: Math.random };

/** Exponential, capped, with ±20 % jitter so that a fleet that failed together does not retry together. */
export function backoffDelay(failures: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(exp * (0.8 + 0.4 * policy.random()));
}
