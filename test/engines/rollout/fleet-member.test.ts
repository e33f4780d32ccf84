import { fleetMember } from '../../../lib/engines/rollout/fleet';
import { ClusterRecord } from '../../../lib/model/ports/cluster-store';
import { Condition } from '../../../lib/model/cluster/schema/status';

/**
 * Which stopped clusters are a failed roll to the fleet rollout (the waves after them halt with haltOnFailure, or go
 * on without them), and which are not: a cluster that stopped short of its desired config is never waited for.
 */

const T = '2030-01-01T00:00:00.000Z';
const DESIRED = 'aaaa';
const stalled = (reason: string): Condition => ({
  type: 'Stalled',
  status: 'True',
  reason,
  message: `${reason}: see the stack's events`,
  lastTransitionTime: T,
  observedGeneration: 1,
});

test.each([
  {
    what: 'Stalled UpdateFailed (its update rolled back, retries spent)',
    conditions: [stalled('UpdateFailed')],
    failed: true,
  },
  { what: 'Stalled RecoveryExhausted', conditions: [stalled('RecoveryExhausted')], failed: true },
  {
    what: 'Stalled DeleteFailed (its create rolled back, the delete before creating it again failed)',
    conditions: [stalled('DeleteFailed')],
    live: undefined,
    failed: true,
  },
  {
    what: 'Stalled ReconcileFailed (its attempts spent on an error), the old config live',
    conditions: [stalled('ReconcileFailed')],
    live: 'bbbb',
    failed: true,
  },
  {
    what: 'Stalled AccountMismatch before it rolled (it cannot roll: a human must act)',
    conditions: [stalled('AccountMismatch')],
    live: 'bbbb',
    failed: true,
  },
  {
    what: 'Stalled DeleteFailed of an object being deleted (it leaves the fleet)',
    conditions: [stalled('DeleteFailed')],
    deleting: true,
    failed: false,
  },
  {
    what: 'Stalled InvalidSpec (no desired config: whether it would roll is not known)',
    conditions: [stalled('InvalidSpec')],
    desired: undefined,
    live: 'bbbb',
    failed: true,
  },
  {
    what: 'Stalled ReconcileFailed with its desired config live (its roll is done)',
    conditions: [stalled('ReconcileFailed')],
    live: DESIRED,
    failed: false,
  },
  { what: 'nothing stalled, the old config live (waiting its turn)', conditions: [], live: 'bbbb', failed: false },
])('$what: a failed roll $failed', ({ conditions, failed, ...row }) => {
  // GIVEN the cluster's record and stack
  const desired = 'desired' in row ? row.desired : DESIRED;
  const live = 'live' in row ? row.live : undefined;
  const record: ClusterRecord = {
    ...recordWith({ conditions, cloudConfigChecksum: live }),
    deletionRequested: row.deleting ?? false,
  };
  const stack = {
    name: 'WorkerStack-c1',
    id: 'arn:aws:cloudformation:eu-west-1:111111111111:stack/WorkerStack-c1/1',
    status: live === undefined ? 'DELETE_FAILED' : 'UPDATE_COMPLETE',
    outputs: live === undefined ? {} : { ConfigChecksum: live },
  };

  // WHEN the rollout gate looks at it
  const m = fleetMember(record, { template: 'flatcar' }, desired, stack);

  // THEN
  expect(m.failedRoll !== undefined).toBe(failed);
});

/** The record of cluster c1 with this status (on its first generation, not being deleted). */
const recordWith = (status: ClusterRecord['status']): ClusterRecord => ({
  name: 'c1',
  source: 'clusters/c1.yaml',
  raw: {},
  parseProblems: [],
  generation: 1,
  resourceVersion: '1',
  deletionRequested: false,
  status,
});

describe('roll keys read by other code (a release deployed): a replacement pending until read anew', () => {
  const KEY = 'rk1:aaaa';
  const rollKeys = (code?: string) => ({ inputs: 'i', stack: 's', ...(code ? { code } : {}) });
  test.each([
    { what: 'keys read by this code, equal', controller: { rollKeys: rollKeys('new') }, pending: false },
    { what: 'keys read by the previous code', controller: { rollKeys: rollKeys('old') }, pending: true },
    { what: 'keys read by code that did not say which', controller: { rollKeys: rollKeys() }, pending: true },
    {
      what: 'no keys read, its last change set executed by the previous code',
      controller: { appliedBy: { version: '0.1.0', code: 'old' } },
      pending: true,
    },
    {
      what: 'no keys read, its last change set executed by this code',
      controller: { appliedBy: { version: '0.2.0', code: 'new' } },
      pending: false,
    },
    { what: 'nothing recorded (a stack made by cdk deploy)', controller: {}, pending: false },
    {
      what: 'keys read by the previous code, the gate told no code (rollout status)',
      controller: { rollKeys: rollKeys('old') },
      code: null,
      pending: false,
    },
  ])('$what: pending $pending', ({ controller, pending, ...row }) => {
    // GIVEN a cluster on its desired config with equal recorded keys
    const record = recordWith({
      conditions: [],
      cloudConfigChecksum: DESIRED,
      rollKey: KEY,
      desiredRollKey: KEY,
      controller,
    });
    const stack = { name: 'WorkerStack-c1', id: 'x', status: 'UPDATE_COMPLETE', outputs: { ConfigChecksum: DESIRED } };
    // WHEN the gate of code "new" looks at it
    const m = fleetMember(record, {}, DESIRED, stack, row.code === null ? undefined : 'new');
    // THEN
    expect(m.rollPending).toBe(pending);
  });

  test('a Stalled cluster whose keys the previous code read failed its roll (it never reads them again on its own)', () => {
    // GIVEN
    const record = recordWith({
      conditions: [stalled('AccountMismatch')],
      cloudConfigChecksum: DESIRED,
      rollKey: KEY,
      desiredRollKey: KEY,
      controller: { rollKeys: rollKeys('old') },
    });
    const stack = { name: 'WorkerStack-c1', id: 'x', status: 'UPDATE_COMPLETE', outputs: { ConfigChecksum: DESIRED } };
    // WHEN
    const m = fleetMember(record, {}, DESIRED, stack, 'new');
    // THEN
    expect(m.failedRoll).toMatch(/^Stalled AccountMismatch/);
  });
});

test('a Stalled pooled cluster one of whose pools was never live (its create failed) failed its roll, whatever the others carry', () => {
  // GIVEN the shared stack on its config, pool spot without a stack that ever completed
  const record = recordWith({
    conditions: [stalled('DeleteFailed')],
    cloudConfigChecksum: DESIRED,
    pools: [{ name: 'spot', stackName: 'WorkerStack-c1-Pool-spot', stackStatus: 'DELETE_FAILED', conditions: [] }],
  });
  const stack = { name: 'WorkerStack-c1', id: 'x', status: 'UPDATE_COMPLETE', outputs: { ConfigChecksum: DESIRED } };
  const poolChecksums = new Map([
    ['default', DESIRED],
    ['spot', 'cccc'],
  ]);
  // WHEN
  const m = fleetMember(record, { poolChecksums }, DESIRED, stack);
  // THEN
  expect(m.failedRoll).toMatch(/^Stalled DeleteFailed/);
});

describe('a cluster on an image channel: a replacement pending until its status records the pins of now applied', () => {
  test.each([
    { what: 'the inputs of now applied (the pins included)', applied: 'key-now', inputsKey: 'key-now', pending: false },
    { what: 'a new release pinned since, not read yet', applied: 'key-before', inputsKey: 'key-now', pending: true },
    { what: 'never applied', applied: undefined, inputsKey: 'key-now', pending: true },
    { what: 'no channel (no key given): as before', applied: 'key-before', inputsKey: undefined, pending: false },
  ])('$what: pending $pending', ({ applied, inputsKey, pending }) => {
    // GIVEN a cluster settled on its config, equal roll keys recorded
    const record = recordWith({
      conditions: [],
      cloudConfigChecksum: DESIRED,
      rollKey: 'rk2:aaaa',
      desiredRollKey: 'rk2:aaaa',
      controller: applied ? { appliedInputsKey: applied } : {},
    });
    const stack = { name: 'WorkerStack-c1', id: 'x', status: 'UPDATE_COMPLETE', outputs: { ConfigChecksum: DESIRED } };
    // WHEN the gate looks at it with the key of what it asks for now
    const m = fleetMember(record, inputsKey ? { inputsKey } : {}, DESIRED, stack);
    // THEN
    expect(m.rollPending).toBe(pending);
  });
});
