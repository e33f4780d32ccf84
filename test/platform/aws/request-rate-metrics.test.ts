import { Registry } from 'prom-client';
import { PacingLedger, RequestRateLimiter } from '../../../lib/platform/aws/request-rate';
import { registerRequestRateMetrics } from '../../../lib/platform/aws/request-rate-metrics';

test('the requests a limiter held back, and their wait, are on /metrics by API, as of the scrape', async () => {
  // GIVEN two limiters (two regions) counting into one ledger, on the daemon's registry
  const ledger = new PacingLedger();
  const registry = new Registry();
  registerRequestRateMetrics(registry, ledger);
  const rates = { read: { ratePerSecond: 2, burst: 1 }, write: { ratePerSecond: 1, burst: 1 } };
  const [eu, us] = [0, 1].map(() => new RequestRateLimiter({ rates, now: () => 0, ledger }));
  const before = await registry.metrics();

  // WHEN each sends two DescribeStacks at once (the second waits 500 ms), and one region two writes (1 s)
  for (const l of [eu, us]) for (let i = 0; i < 2; i++) l.reserve('DescribeStacks');
  eu.reserve('CreateChangeSet');
  eu.reserve('CreateChangeSet');

  // THEN before: declared, no sample; after: 2 DescribeStacks held back 1 s in all, 1 CreateChangeSet 1 s
  expect(before).toMatch(/^# TYPE worker_stacks_aws_paced_requests_total counter$/m);
  expect(before).not.toMatch(/^worker_stacks_aws_paced_requests_total\{/m);
  const after = await registry.metrics();
  expect(after).toMatch(/^worker_stacks_aws_paced_requests_total\{api="DescribeStacks"\} 2$/m);
  expect(after).toMatch(/^worker_stacks_aws_paced_requests_total\{api="CreateChangeSet"\} 1$/m);
  expect(after).toMatch(/^worker_stacks_aws_paced_seconds_total\{api="DescribeStacks"\} 1$/m);
  expect(after).toMatch(/^worker_stacks_aws_paced_seconds_total\{api="CreateChangeSet"\} 1$/m);
});
