import { Counter, Registry } from 'prom-client';
import { PacingLedger, processPacing } from './request-rate';

/**
 * The daemon's own pacing of its AWS requests (lib/platform/aws/request-rate.ts) on a registry, read at each scrape:
 * how many requests waited for a token, and how long in all, per API. A rate that stays high says the daemon, not
 * AWS, sets the pace: raise `--cfn-read-qps` / `--cfn-write-qps` if AWS allows the account more.
 */
export function registerRequestRateMetrics(registry: Registry, ledger: PacingLedger = processPacing): void {
  const requests: Counter<'api'> = new Counter({
    name: 'worker_stacks_aws_paced_requests_total',
    help: 'AWS requests this process held back until its own rate limit (per API, account and region) let them go, by API',
    labelNames: ['api'],
    registers: [registry],
    collect(): void {
      requests.reset();
      for (const [api, w] of ledger.waited) requests.inc({ api }, w.requests);
    },
  });
  const seconds: Counter<'api'> = new Counter({
    name: 'worker_stacks_aws_paced_seconds_total',
    help: "Time AWS requests waited for this process's own rate limit, in all, by API",
    labelNames: ['api'],
    registers: [registry],
    collect(): void {
      seconds.reset();
      for (const [api, w] of ledger.waited) seconds.inc({ api }, w.ms / 1000);
    },
  });
}
