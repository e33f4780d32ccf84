/** A token bucket: `ratePerSecond` tokens a second, at most `burst` kept. */
export interface RequestRate {
  readonly ratePerSecond: number;
  readonly burst: number;
}

/** The two kinds of CloudFormation request a client paces: reads (Describe*, List*, Get*) and writes (the rest). */
export interface RequestRates {
  readonly read: RequestRate;
  readonly write: RequestRate;
}

/**
 * What this daemon sends per account and region, at most, per CloudFormation API (each API its own bucket, as AWS
 * throttles them). CloudFormation publishes no per-API rates; these are the lowest reported for throttled accounts
 * (bench/fleet-rollout.ts assumes the same as AWS's side), and client-go's old defaults for reads (QPS 5, burst 10).
 * The rest of the account's traffic (consoles, pipelines, other tools) then has whatever AWS allows above them.
 */
export const DEFAULT_CLOUDFORMATION_RATES: RequestRates = {
  read: { ratePerSecond: 5, burst: 10 },
  write: { ratePerSecond: 2, burst: 4 },
};

/** The rates of `--cfn-read-qps` / `--cfn-write-qps`: a burst of twice the rate (at least 1). */
export function ratesFromQps(read: number, write: number): RequestRates {
  const rate = (qps: number): RequestRate => ({ ratePerSecond: qps, burst: Math.max(1, Math.ceil(2 * qps)) });
  return { read: rate(read), write: rate(write) };
}

/** Describe*, List*, Get*: reads; anything else changes something. */
export const isReadApi = (api: string): boolean => /^(Describe|List|Get)/.test(api);

export interface RequestRateLimiterProps {
  /** @default DEFAULT_CLOUDFORMATION_RATES */
  readonly rates?: RequestRates;
  /** The clock, ms. @default Date.now */
  readonly now?: () => number;
  /** How `take` waits. @default a timer */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Where the waits are counted as well (the process's, for /metrics). @default nowhere else */
  readonly ledger?: PacingLedger;
}

/**
 * The client side of a request quota, as client-go's QPS and burst or golang.org/x/time/rate: one token bucket per
 * API, and every request takes a token before it is sent (every attempt of a retried one, every page of a listing).
 * `reserve` takes it now and says how long to wait for it to be due: requests queue in the order they asked, and
 * none is refused. Time is injected (`now`, `sleep`), so the reconciler's simulator drives it with its own clock.
 */
export class RequestRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  /** Requests that had to wait, and the ms they waited in all, per API (the bench reads them). */
  public readonly waited = new Map<string, PacedRequests>();

  private readonly rates: RequestRates;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly ledger?: PacingLedger;

  constructor(props: RequestRateLimiterProps = {}) {
    this.rates = props.rates ?? DEFAULT_CLOUDFORMATION_RATES;
    this.now = props.now ?? (() => Date.now());
    this.sleep = props.sleep ?? realSleep;
    this.ledger = props.ledger;
  }

  /** Takes the next token of `api`'s bucket: the ms until it is due (0: send now). */
  public reserve(api: string): number {
    const rate = isReadApi(api) ? this.rates.read : this.rates.write;
    const now = this.now();
    const b = this.buckets.get(api) ?? { tokens: rate.burst, at: now };
    // Tokens may go below 0: each one taken ahead is a later request's wait, in the order they asked.
    b.tokens = Math.min(rate.burst, b.tokens + (Math.max(0, now - b.at) / 1000) * rate.ratePerSecond);
    b.at = now;
    b.tokens -= 1;
    this.buckets.set(api, b);
    if (b.tokens >= 0) return 0;
    // Whole ms, rounded up: the request is never sent before its token has fully come in.
    const delay = Math.ceil((-b.tokens / rate.ratePerSecond) * 1000);
    add(this.waited, api, delay);
    if (this.ledger) add(this.ledger.waited, api, delay);
    return delay;
  }

  /** Waits for `api`'s next token. */
  public async take(api: string): Promise<void> {
    const delay = this.reserve(api);
    if (delay > 0) await this.sleep(delay);
  }
}

export interface PacedRequests {
  readonly requests: number;
  readonly ms: number;
}

/** The waits of every limiter of a process, per API: what `worker_stacks_aws_paced_requests_total` and its wait show. */
export class PacingLedger {
  public readonly waited = new Map<string, PacedRequests>();
}

/** The process's ledger (the daemon's limiters count into it; registerRequestRateMetrics exposes it). */
export const processPacing = new PacingLedger();

function add(to: Map<string, PacedRequests>, api: string, ms: number): void {
  const w = to.get(api) ?? { requests: 0, ms: 0 };
  to.set(api, { requests: w.requests + 1, ms: w.ms + ms });
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
