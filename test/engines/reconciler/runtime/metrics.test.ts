import { ReconcilerMetrics } from '../../../../lib/engines/reconciler/runtime/metrics';
import { complete, fail, stuck } from '../../../fakes/fake-cloudformation';
import { ACCOUNT, ASG_FAILURE, Harness } from '../../../fakes/harness';

/** The Prometheus metrics a pass leaves behind, and the in-progress gauge while a stack is in progress (watched, not waited on). */

let h: Harness;
afterEach(() => h.cleanup());

const value = async (m: ReconcilerMetrics, name: string, labels = '') => {
  const text = await m.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
};

test('a stack in progress counts as in progress while it lasts, and not after', async () => {
  // GIVEN one cluster whose creation stays in progress for a while, and a probe of the gauge on every poll of the fake clock
  h = new Harness();
  h.cfn.setDefault(h.stackName(), stuck());
  const metrics = new ReconcilerMetrics();
  const seen: Promise<number | undefined>[] = [];
  h.cfn.onPoll = (s) => {
    seen.push(value(metrics, 'worker_stacks_stacks_in_progress'));
    if (seen.length === 3) h.cfn.release(s.name);
  };

  // WHEN passes run until the cluster settles (requeued while its stack is in progress)
  await h.pass({ metrics });

  // THEN while the stack was in progress the gauge read 1, and after the pass (stack complete) 0
  expect(await Promise.all(seen)).toEqual([1, 1, 1]);
  expect(await value(metrics, 'worker_stacks_stacks_in_progress')).toBe(0);
});

test('reconciles by result, clusters by condition, and the last successful pass time follow the fleet', async () => {
  // GIVEN two clusters, one of which fails to create (a failure that is retried: Degraded, not yet Stalled)
  h = new Harness({ clusters: ['ok-1', 'bad-1'] });
  h.cfn.setDefault(h.stackName('ok-1'), complete());
  h.cfn.setDefault(h.stackName('bad-1'), fail(ASG_FAILURE));
  const metrics = new ReconcilerMetrics();
  const firstPassAt = h.clock.ms / 1000;

  // WHEN passes run until both settle (the first starts both stacks, the next one records their ends)
  await h.pass({ metrics });

  // THEN one applied and one failed reconcile are counted, one cluster is Ready and one Degraded, none Stalled, each
  // series labelled with the clusters' account
  const acct = `account="${ACCOUNT}"`;
  expect(await value(metrics, 'worker_stacks_reconciles_total', `{result="applied",${acct}}`)).toBe(1);
  expect(await value(metrics, 'worker_stacks_reconciles_total', `{result="failed",${acct}}`)).toBe(1);
  expect(await value(metrics, 'worker_stacks_clusters', `{condition="Ready",status="True",${acct}}`)).toBe(1);
  expect(await value(metrics, 'worker_stacks_clusters', `{condition="Degraded",status="True",${acct}}`)).toBe(1);
  expect(await value(metrics, 'worker_stacks_clusters', `{condition="Stalled",status="True",${acct}}`)).toBeUndefined();
  expect(await value(metrics, 'worker_stacks_clusters', `{condition="Stalled",status="False",${acct}}`)).toBe(2);
  expect(await value(metrics, 'worker_stacks_reconcile_duration_seconds_count', '{result="applied"}')).toBe(1);
  // AND a pass with a failure is not a successful pass: the gauge stays at the first pass (both stacks started, nothing
  // failed yet) and did not move to the pass that recorded the failure
  expect(h.clock.ms / 1000).toBeGreaterThan(firstPassAt);
  expect(await value(metrics, 'worker_stacks_last_successful_pass_timestamp_seconds')).toBe(firstPassAt);
});

test('a permanently invalid object (Stalled: its own alert) does not keep the passes from being successful', async () => {
  // GIVEN a fleet of a valid cluster and an object that does not validate
  h = new Harness({ clusters: ['ok-1', 'bad-1'] });
  h.edit('bad-1', (raw) => (raw.spec.pool.minSize = 99));
  const metrics = new ReconcilerMetrics();
  const { controller } = await h.pass({ metrics });
  expect(h.condition('Stalled', 'bad-1')).toMatchObject({ status: 'True', reason: 'InvalidSpec' });

  // WHEN time passes, and a pass runs again (and the daemon's refresh looks at the fleet)
  h.cfn.advance(3_600_000);
  await h.pass({ metrics });
  const afterPass = await value(metrics, 'worker_stacks_last_successful_pass_timestamp_seconds');
  h.cfn.advance(60_000);
  await controller.observeFleet(new Map(), []);

  // THEN each of them counts as a successful pass: the gauge follows the clock
  expect(afterPass).toBe(h.clock.ms / 1000 - 60);
  expect(await value(metrics, 'worker_stacks_last_successful_pass_timestamp_seconds')).toBe(h.clock.ms / 1000);
});

test('per-cluster condition series, time in progress per stack, pass durations and the process metrics', async () => {
  // GIVEN two clusters: one whose create stays in progress, one that completes; metrics on the fake clock
  h = new Harness({ clusters: ['fast-1', 'slow-1'] });
  h.cfn.setDefault(h.stackName('fast-1'), complete());
  h.cfn.setDefault(h.stackName('slow-1'), stuck());
  const metrics = new ReconcilerMetrics({ now: () => h.clock.ms / 1000 });
  const controller = (await h.pass({ metrics })).controller;

  // WHEN two minutes pass with slow-1 still in progress and the fleet is observed again
  h.cfn.advance(120_000);
  await controller.observeFleet(new Map(), []);

  // THEN each cluster has one series per condition, 1 for the status it has
  expect(
    await value(metrics, 'worker_stacks_cluster_condition', '{cluster="fast-1",condition="Ready",status="True"}'),
  ).toBe(1);
  expect(
    await value(metrics, 'worker_stacks_cluster_condition', '{cluster="slow-1",condition="Progressing",status="True"}'),
  ).toBe(1);
  expect(
    await value(metrics, 'worker_stacks_cluster_condition', '{cluster="slow-1",condition="Ready",status="True"}'),
  ).toBeUndefined();
  // AND the stack in progress reports how long, from the change set we started (at least the two minutes), the other none
  const slow = await value(metrics, 'worker_stacks_stack_in_progress_seconds', '{cluster="slow-1"}');
  expect(slow).toBeGreaterThanOrEqual(120);
  expect(await value(metrics, 'worker_stacks_stack_in_progress_seconds', '{cluster="fast-1"}')).toBeUndefined();
  // AND every pass was timed, and prom-client's process and Node metrics are on the same registry
  expect(await value(metrics, 'worker_stacks_pass_duration_seconds_count')).toBeGreaterThanOrEqual(1);
  expect(await value(metrics, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  expect(await value(metrics, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);

  // WHEN the stack completes and the fleet is observed again, THEN its time-in-progress series is gone
  h.cfn.release(h.stackName('slow-1'));
  await h.pass({ metrics });
  expect(await value(metrics, 'worker_stacks_stack_in_progress_seconds', '{cluster="slow-1"}')).toBeUndefined();
  expect(
    await value(metrics, 'worker_stacks_cluster_condition', '{cluster="slow-1",condition="Ready",status="True"}'),
  ).toBe(1);
});

test('a pass logs one summary line with the results it had', async () => {
  // GIVEN one cluster that creates its stack
  h = new Harness();
  h.cfn.setDefault(h.stackName(), complete());

  // WHEN passes run until it settles
  await h.pass();

  // THEN each pass said what it did, in one line
  const summaries = h.log.entries.filter((e) => e.msg === 'pass done');
  expect(summaries.length).toBeGreaterThanOrEqual(2);
  expect(summaries[0].obj).toMatchObject({ clusters: 1, reconciled: 1, results: { waiting: 1 } });
  expect(summaries.at(-1)!.obj).toMatchObject({ results: { applied: 1 } });
});

test('transient reconciles are counted again by reason: AWS throttling is told from network errors', async () => {
  // GIVEN
  const metrics = new ReconcilerMetrics({ processMetrics: false });
  // WHEN a throttled reconcile, one that could not reach AWS, and one that applied are observed
  metrics.observeReconcile({ result: 'transient', reason: 'Throttled' }, 0.1, ACCOUNT);
  metrics.observeReconcile({ result: 'transient', reason: 'AwsUnavailable' }, 0.1, ACCOUNT);
  metrics.observeReconcile({ result: 'applied' }, 0.1, ACCOUNT);
  // THEN each transient one is counted under its reason, beside the count by result
  const acct = `account="${ACCOUNT}"`;
  expect(await value(metrics, 'worker_stacks_transient_reconciles_total', `{reason="Throttled",${acct}}`)).toBe(1);
  expect(await value(metrics, 'worker_stacks_transient_reconciles_total', `{reason="AwsUnavailable",${acct}}`)).toBe(1);
  expect(await value(metrics, 'worker_stacks_reconciles_total', `{result="transient",${acct}}`)).toBe(2);
});

test('a pending replacement of nodes is a series by cluster, pool and cause, gone once it is done', async () => {
  // GIVEN a settled cluster whose status records pending rolls: an image for the shared stack, a release for a pool
  h = new Harness({ clusters: ['c-1'] });
  const metrics = new ReconcilerMetrics({ now: () => h.clock.ms / 1000 });
  const controller = (await h.pass({ metrics })).controller;
  const store = h.deps().store;
  const rec = (await store.get('c-1'))!;
  await store.writeStatus(
    'c-1',
    {
      ...rec.status!,
      pendingRoll: 'image, launch template: NetworkInterfaces, SecurityGroupIds',
      pools: [
        {
          name: 'spot',
          stackName: 'WorkerStack-c-1-Pool-spot',
          pendingRoll: 'release 0.1.0 → 0.2.0: launch template: NetworkInterfaces',
          conditions: [],
        },
      ],
    },
    rec.resourceVersion,
  );

  // WHEN the fleet is observed
  await controller.observeFleet(new Map(), []);

  // THEN one series per stack, its cause a label of few values
  const series = (await metrics.registry.metrics())
    .split('\n')
    .filter((l) => l.startsWith('worker_stacks_pending_roll{'));
  expect(series.sort()).toEqual([
    'worker_stacks_pending_roll{cluster="c-1",pool="default",cause="image,launch template"} 1',
    'worker_stacks_pending_roll{cluster="c-1",pool="spot",cause="release"} 1',
  ]);

  // WHEN nothing is pending any more, THEN the series are gone
  const now = (await store.get('c-1'))!;
  await store.writeStatus('c-1', { ...now.status!, pendingRoll: undefined, pools: undefined }, now.resourceVersion);
  await controller.observeFleet(new Map(), []);
  expect((await metrics.registry.metrics()).includes('worker_stacks_pending_roll{')).toBe(false);
});

test('image channel series follow the last refresh: a channel no cluster names any more has none', async () => {
  // GIVEN the metrics after a refresh of two channels
  const metrics = new ReconcilerMetrics({ processMetrics: false });
  metrics.observeChannels({
    census: [
      { channel: 'al2023', release: 'r2', state: 'runs', clusters: 3 },
      { channel: 'al2023', release: 'r2', state: 'waits', clusters: 2 },
      { channel: 'br', release: '', state: 'unpinned', clusters: 1 },
    ],
    health: [
      { channel: 'al2023', newestHalted: false, problems: 0 },
      { channel: 'br', newestHalted: true, problems: 2 },
    ],
  });
  const first = await metrics.registry.metrics();
  // WHEN the next refresh names only al2023
  metrics.observeChannels({
    census: [{ channel: 'al2023', release: 'r2', state: 'runs', clusters: 5 }],
    health: [{ channel: 'al2023', newestHalted: false, problems: 0 }],
  });
  const second = await metrics.registry.metrics();
  // THEN the first scrape has every series, the second only al2023's, with the new counts
  expect(first).toMatch(/^worker_stacks_image_channel_clusters\{channel="al2023",release="r2",state="waits"\} 2$/m);
  expect(first).toMatch(/^worker_stacks_image_channel_newest_release_halted\{channel="br"\} 1$/m);
  expect(first).toMatch(/^worker_stacks_image_channel_problems\{channel="br"\} 2$/m);
  expect(second).toMatch(/^worker_stacks_image_channel_clusters\{channel="al2023",release="r2",state="runs"\} 5$/m);
  expect(second).not.toMatch(/state="waits"|channel="br"/);
});
