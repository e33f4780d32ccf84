import { ReconcilerMetrics } from '../../lib/reconciler/metrics';
import { complete, fail, stuck } from '../fakes/fake-cloudformation';
import { ASG_FAILURE, Harness } from '../fakes/harness';

/** The Prometheus metrics a pass leaves behind, and the in-progress gauge while a stack is being waited on. */

let h: Harness;
afterEach(() => h.cleanup());

const value = async (m: ReconcilerMetrics, name: string, labels = '') => {
  const text = await m.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
};

test('a stack being waited on counts as in progress while the wait lasts, and not after', async () => {
  // GIVEN one cluster whose creation stays in progress for a while, and a probe of the gauge on every poll
  h = new Harness();
  h.cfn.setDefault(h.stackName(), stuck());
  const metrics = new ReconcilerMetrics();
  const seen: Promise<number | undefined>[] = [];
  h.cfn.onPoll = (s) => {
    seen.push(value(metrics, 'worker_stacks_stacks_in_progress'));
    if (seen.length === 3) h.cfn.release(s.name);
  };

  // WHEN a pass runs
  await h.pass({ metrics });

  // THEN during the wait the gauge read 1, and after the pass (stack complete) 0
  expect(await Promise.all(seen)).toEqual([1, 1, 1]);
  expect(await value(metrics, 'worker_stacks_stacks_in_progress')).toBe(0);
});

test('reconciles by result, clusters by condition, and the last successful pass time follow the fleet', async () => {
  // GIVEN two clusters, one of which fails to create
  h = new Harness({ clusters: ['ok-1', 'bad-1'] });
  h.cfn.setDefault(h.stackName('ok-1'), complete());
  h.cfn.setDefault(h.stackName('bad-1'), fail(ASG_FAILURE));
  const metrics = new ReconcilerMetrics();

  // WHEN a pass runs
  await h.pass({ metrics });

  // THEN one applied and one failed reconcile are counted, one cluster is Ready and one Failed
  expect(await value(metrics, 'worker_stacks_reconciles_total', '{result="applied"}')).toBe(1);
  expect(await value(metrics, 'worker_stacks_reconciles_total', '{result="failed"}')).toBe(1);
  expect(await value(metrics, 'worker_stacks_clusters', '{condition="Ready",status="True"}')).toBe(1);
  expect(await value(metrics, 'worker_stacks_clusters', '{condition="Failed",status="True"}')).toBe(1);
  expect(await value(metrics, 'worker_stacks_reconcile_duration_seconds_count', '{result="applied"}')).toBe(1);
  // AND a pass with a failure is not a successful pass
  expect(await value(metrics, 'worker_stacks_last_successful_pass_timestamp_seconds')).toBe(0);
});
