import { ReconcilerMetrics } from '../../../lib/engines/reconciler/runtime/metrics';

const value = async (m: ReconcilerMetrics, name: string, labels = '') => {
  const text = await m.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
};

test('per wave: rolls started, holds by reason (a halted wave shows as RolloutHalted), and the time held in the wave', async () => {
  // GIVEN
  const m = new ReconcilerMetrics();
  // WHEN the gate holds two looks at the early wave (one halted), then lets a roll start after 45 minutes
  m.observeRollout({ policy: 'fleet', wave: 'early', event: 'held', reason: 'WaitingForWave' });
  m.observeRollout({ policy: 'fleet', wave: 'early', event: 'held', reason: 'RolloutHalted' });
  m.observeRollout({ policy: 'fleet', wave: 'early', event: 'started', waitedMs: 45 * 60_000 });
  m.observeRollout({ policy: 'fleet', wave: 'canary', event: 'started', waitedMs: 0 });
  // THEN
  expect(await value(m, 'worker_stacks_rollout_rolls_started_total', '{policy="fleet",wave="early"}')).toBe(1);
  expect(await value(m, 'worker_stacks_rollout_rolls_started_total', '{policy="fleet",wave="canary"}')).toBe(1);
  expect(
    await value(m, 'worker_stacks_rollout_holds_total', '{policy="fleet",wave="early",reason="RolloutHalted"}'),
  ).toBe(1);
  expect(
    await value(m, 'worker_stacks_rollout_holds_total', '{policy="fleet",wave="early",reason="WaitingForWave"}'),
  ).toBe(1);
  expect(await value(m, 'worker_stacks_rollout_wait_seconds_sum', '{policy="fleet",wave="early"}')).toBe(2700);
  expect(await value(m, 'worker_stacks_rollout_wait_seconds_bucket', '{le="1800",policy="fleet",wave="early"}')).toBe(
    0,
  );
  expect(await value(m, 'worker_stacks_rollout_wait_seconds_bucket', '{le="3600",policy="fleet",wave="early"}')).toBe(
    1,
  );
});
