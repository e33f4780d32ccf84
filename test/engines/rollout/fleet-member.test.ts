import { fleetMember } from '../../../lib/engines/rollout/fleet';
import { ClusterRecord } from '../../../lib/model/ports/cluster-store';
import { Condition } from '../../../lib/model/cluster/status';

/** Which stalls are a failed roll to the fleet rollout (a halted wave with haltOnFailure), and which are not. */

const T = '2030-01-01T00:00:00.000Z';
const stalled = (reason: string): Condition => ({
  type: 'Stalled',
  status: 'True',
  reason,
  message: `${reason}: see the stack's events`,
  lastTransitionTime: T,
  observedGeneration: 1,
});
const record = (conditions: Condition[], deletionRequested = false): ClusterRecord => ({
  name: 'c1',
  source: 'clusters/c1.yaml',
  raw: {},
  parseProblems: [],
  generation: 1,
  resourceVersion: '1',
  deletionRequested,
  status: { conditions },
});

test.each([
  // [the cluster's state, its conditions, the object being deleted, a failed roll?]
  [
    'Stalled UpdateFailed (its update rolled back, retries spent): a failed roll',
    [stalled('UpdateFailed')],
    false,
    true,
  ],
  ['Stalled RecoveryExhausted: a failed roll', [stalled('RecoveryExhausted')], false, true],
  [
    'Stalled DeleteFailed (its create rolled back, the delete before creating it again failed): a failed roll',
    [stalled('DeleteFailed')],
    false,
    true,
  ],
  [
    'Stalled DeleteFailed of an object being deleted (it leaves the fleet): not a failed roll',
    [stalled('DeleteFailed')],
    true,
    false,
  ],
  ['Stalled InvalidSpec (nothing was rolled): not a failed roll', [stalled('InvalidSpec')], false, false],
  ['Stalled AccountMismatch (nothing was rolled): not a failed roll', [stalled('AccountMismatch')], false, false],
  ['nothing stalled: not a failed roll', [], false, false],
])('%s', (_what, conditions, deleting, failed) => {
  // WHEN the rollout gate looks at the cluster
  const m = fleetMember(record(conditions, deleting), { template: 'flatcar' }, 'aaaa', {
    name: 'WorkerStack-c1',
    id: 'arn:aws:cloudformation:eu-west-1:111111111111:stack/WorkerStack-c1/1',
    status: 'DELETE_FAILED',
    outputs: {},
  });

  // THEN
  expect(m.failedRoll !== undefined).toBe(failed);
});
