import { Result } from '../../lib/reconciler/context';
import { Method } from '../fakes/fake-cloudformation';
import { EXAMPLE, Harness } from '../fakes/harness';

/**
 * Throttling: the SDK adapter retries in real life (adaptive mode); when a
 * ThrottlingException still gets through, the workflow's one error path
 * records a retryable failure with backoff, and the next due pass succeeds.
 */

let h: Harness;
afterEach(() => h.cleanup());

/** `early`: what a pass before retryAfter does. A stack left in progress is waited on (a read), backoff or not. */
const ROWS: Array<{ method: Method; scenario: 'create' | 'update'; task: string; early?: Result }> = [
  { method: 'describeStack', scenario: 'create', task: 'observe' },
  { method: 'createChangeSet', scenario: 'create', task: 'change-set' },
  { method: 'waitForChangeSet', scenario: 'create', task: 'change-set' },
  { method: 'executeChangeSet', scenario: 'create', task: 'execute' },
  { method: 'waitForStack', scenario: 'create', task: 'wait', early: 'recorded' },
  { method: 'describeChangeSet', scenario: 'update', task: 'change-set' },
  { method: 'createChangeSet', scenario: 'update', task: 'change-set' },
  { method: 'executeChangeSet', scenario: 'update', task: 'execute' },
];

test.each(ROWS)('$scenario, $method throttled: Throttled recorded with backoff, then the due pass converges', async ({ method, scenario, task, early: expected = 'backoff' }) => {
  // GIVEN the scenario's change, and CloudFormation throttling the first call of `method`
  h = new Harness();
  if (scenario === 'update') {
    expect((await h.reconcile()).result).toBe('applied');
    h.edit(EXAMPLE, (raw) => {
      raw.spec.cloudConfig.values.maxPods = 110;
    });
  }
  const before = h.state()?.status?.cloudConfigChecksum;
  h.cfn.throttle(method, 1);
  h.cfn.resetCalls();

  // WHEN a pass runs
  const first = await h.reconcile();

  // THEN a retryable failure: reason Throttled, naming the task, retry after the first backoff step (1 s), nothing recorded as live
  expect(first).toMatchObject({ result: 'failed', requeueAfterMs: 1000 });
  expect(h.cfn.count(method)).toBe(1);
  expect(h.condition('Failed')).toMatchObject({ status: 'True', reason: 'Throttled', message: `${task}: Rate exceeded` });
  expect(h.status()).toMatchObject({ failures: 1, retryAfter: new Date(h.clock.ms + 1000).toISOString() });
  expect(h.status().cloudConfigChecksum).toBe(before);

  // WHEN a pass runs before the retry is due, then passes once it is
  h.clock.advance(999);
  const early = await h.reconcile();
  h.clock.advance(1);
  const later: Result[] = [];
  while (later.length < 4 && later.at(-1) !== 'unchanged') later.push((await h.reconcile()).result);

  // THEN the early one backs off (or only waits); the due one applies, once, and the cluster is Ready with the live checksum
  expect(early.result).toBe(expected);
  expect(later.at(-1)).toBe('unchanged');
  expect(later.filter((r) => r === 'failed')).toEqual([]);
  expect(h.cfn.started.filter((o) => o.kind === scenario)).toHaveLength(1);
  expect(h.condition('Ready')?.status).toBe('True');
  expect(h.status()).toMatchObject({ failures: 0, stackStatus: `${scenario.toUpperCase()}_COMPLETE`, observedGeneration: scenario === 'create' ? 1 : 2 });
  expect(h.status().cloudConfigChecksum).toBe(h.cfn.peek(h.stackName())?.outputs.ConfigChecksum);
  expect(h.status().retryAfter).toBeUndefined();
});

test('a throttled batched listing falls back to one describe per cluster, and the pass goes on', async () => {
  // GIVEN two clusters, and the listing of stacks throttled
  h = new Harness({ clusters: [EXAMPLE, 'staging-us2'] });
  h.cfn.throttle('listStacks', 1);

  // WHEN a controller pass runs
  const pass = await h.pass({ concurrency: 2 });

  // THEN both clusters were created, each having described its own stack
  expect([...pass.outcomes.values()].map((o) => o.result)).toEqual(['applied', 'applied']);
  expect(h.cfn.count('listStacks')).toBe(1);
  expect(h.cfn.count('describeStack')).toBe(2);
  expect(h.condition('Ready', 'staging-us2')?.status).toBe('True');
});
