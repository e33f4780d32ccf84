import { ClusterStatus, Condition } from '../../../../lib/model/cluster/schema/status';
import { ReconcilerDeps } from '../../../../lib/engines/reconciler/workflow/context';
import { StatusRecorder } from '../../../../lib/engines/reconciler/workflow/status-recorder';
import { ClusterEvent, clusterEventsFor, eventsFor } from '../../../../lib/engines/reconciler/workflow/events';
import { ClusterRecord } from '../../../../lib/model/ports/cluster-store';

/** Which status changes are events on the object, and that the one place statuses are written emits them. */

const T0 = '2024-01-01T00:00:00.000Z';
const T1 = '2024-01-01T00:05:00.000Z';
const cond = (
  type: Condition['type'],
  status: Condition['status'],
  reason: string,
  message = `${reason} message`,
  at = T0,
): Condition => ({ type, status, reason, message, lastTransitionTime: at, observedGeneration: 1 });
const executing = (changeSet: string) => ({
  controller: { executing: { fingerprint: 'f', changeSet, checksum: 'c'.repeat(64), startedAt: T0 } },
});

const idle: ClusterStatus = {
  conditions: [cond('Ready', 'True', 'UpToDate', 'up to date'), cond('Stalled', 'False', 'AsExpected')],
  stackStatus: 'UPDATE_COMPLETE',
};
const rolling: ClusterStatus = {
  conditions: [
    cond('Ready', 'False', 'ChangeSetExecuting'),
    cond(
      'Progressing',
      'True',
      'ChangeSetExecuting',
      'rolling the nodes to config cccccccccccc: changed /etc/sysctl.d/90-kubernetes.conf',
      T1,
    ),
    cond('Stalled', 'False', 'AsExpected'),
  ],
  stackStatus: 'UPDATE_COMPLETE',
  ...executing('ws-1'),
};
const updated: ClusterStatus = {
  conditions: [
    cond('Ready', 'True', 'StackUpdated', 'stack UPDATE_COMPLETE, config cccccccccccc live', T1),
    cond('Stalled', 'False', 'AsExpected'),
  ],
  stackStatus: 'UPDATE_COMPLETE',
};
const rolledBack: ClusterStatus = {
  conditions: [
    cond(
      'Degraded',
      'True',
      'UpdateRolledBack',
      'UPDATE_ROLLBACK_COMPLETE: WorkerGroup UPDATE_FAILED: Received 0 SUCCESS signals',
      T1,
    ),
    cond('Stalled', 'False', 'AsExpected'),
  ],
  stackStatus: 'UPDATE_ROLLBACK_COMPLETE',
};
const waiting: ClusterStatus = {
  conditions: [
    cond('Ready', 'True', 'UpToDate', 'up to date'),
    cond('Progressing', 'False', 'WaitingForWave', 'waits for wave canary: staging-eu1 soaks until 10:40'),
  ],
  stackStatus: 'UPDATE_COMPLETE',
};
const halted: ClusterStatus = {
  conditions: [
    cond('Ready', 'True', 'UpToDate', 'up to date'),
    cond('Progressing', 'False', 'RolloutHalted', 'canary prod-eu1 is Stalled (UpdateFailed)'),
  ],
  stackStatus: 'UPDATE_COMPLETE',
};
const stalled: ClusterStatus = {
  conditions: [cond('Stalled', 'True', 'UpdateFailed', 'the same inputs failed 2 times', T1)],
  stackStatus: 'UPDATE_ROLLBACK_COMPLETE',
};

test.each<[string, ClusterStatus, ClusterStatus, Partial<ClusterEvent>[]]>([
  [
    'a roll starts: what changed',
    idle,
    rolling,
    [
      {
        type: 'Normal',
        reason: 'RollStarted',
        message: 'rolling the nodes to config cccccccccccc: changed /etc/sysctl.d/90-kubernetes.conf',
      },
    ],
  ],
  [
    'the roll completes',
    rolling,
    updated,
    [{ type: 'Normal', reason: 'StackComplete', message: 'stack UPDATE_COMPLETE, config cccccccccccc live' }],
  ],
  [
    'the roll rolls back: the first failing resource',
    rolling,
    rolledBack,
    [{ type: 'Warning', reason: 'RolledBack', message: expect.stringContaining('WorkerGroup UPDATE_FAILED') }],
  ],
  [
    'the cluster stalls',
    rolledBack,
    stalled,
    [{ type: 'Warning', reason: 'Stalled', message: 'UpdateFailed: the same inputs failed 2 times' }],
  ],
  ['nothing an operator follows changed', updated, { ...updated, stackLastUpdated: T1 }, []],
  ['a status rewritten while still rolling', rolling, { ...rolling, stackStatus: 'UPDATE_IN_PROGRESS' }, []],
  ['still stalled, same reason', stalled, { ...stalled, controller: { failures: 3 } }, []],
  [
    'a roll is held for its wave: what it waits for',
    idle,
    waiting,
    [
      {
        type: 'Normal',
        reason: 'RollHeld',
        message: 'WaitingForWave: waits for wave canary: staging-eu1 soaks until 10:40',
      },
    ],
  ],
  [
    'the wave is halted: a warning',
    waiting,
    halted,
    [{ type: 'Warning', reason: 'RollHeld', message: 'RolloutHalted: canary prod-eu1 is Stalled (UpdateFailed)' }],
  ],
  ['still held for the same reason', waiting, { ...waiting, stackLastUpdated: T1 }, []],
  ['released: the roll starts', waiting, rolling, [{ type: 'Normal', reason: 'RollStarted' }]],
])('%s', (_what, before, after, expected) => {
  // GIVEN a status before and after one write, WHEN the events are derived, THEN exactly these
  expect(eventsFor(before, after)).toEqual(expected.map((e) => expect.objectContaining(e)));
});

test('the status recorder emits the events of a status it wrote, and none for a write it skipped', async () => {
  // GIVEN a recorder on a record with an idle status, a store that accepts writes, and an event sink
  const emitted: [string, ClusterEvent][] = [];
  const record: ClusterRecord = {
    name: 'alpha',
    source: 'workercluster ns/alpha',
    parseProblems: [],
    generation: 1,
    status: idle,
    resourceVersion: '1',
  };
  const deps = {
    store: { writeStatus: () => Promise.resolve('2') },
    now: () => new Date(T1),
    dryRun: false,
    log: { warn: () => undefined },
    events: {
      emit: (c: string, e: ClusterEvent) => {
        emitted.push([c, e]);
        return Promise.resolve();
      },
    },
  } as unknown as ReconcilerDeps;
  const recorder = new StatusRecorder(record, deps);

  // WHEN a roll is staged and written, and then the same status staged and written again
  recorder.stage(
    {},
    [
      {
        type: 'Progressing',
        status: 'True',
        reason: 'ChangeSetExecuting',
        message: 'rolling the nodes to config c: first config',
      },
    ],
    executing('ws-9').controller,
  );
  await recorder.flush();
  recorder.stage({}, [], executing('ws-9').controller);
  await recorder.flush();

  // THEN one RollStarted event, on the cluster
  expect(emitted).toEqual([
    [
      'alpha',
      expect.objectContaining({ reason: 'RollStarted', message: 'rolling the nodes to config c: first config' }),
    ],
  ]);
});

test.each([
  // what a pool's entry does between two writes, the event it means
  ['its change set starts', idle, rolling, 'RollStarted'],
  ['its roll rolls back', rolling, { ...idle, stackStatus: 'UPDATE_ROLLBACK_COMPLETE' }, 'RolledBack'],
] as const)('a pool of its own stack: when %s, the event names the pool and its stack', (_what, from, to, reason) => {
  // GIVEN the object's top level unchanged, and its pool spot going from one status to the next
  const pool = (s: ClusterStatus) => ({ ...s, name: 'spot', stackName: 'WorkerStack-c-Pool-spot' });

  // WHEN the events of the change are derived
  const events = clusterEventsFor({ ...idle, pools: [pool(from)] }, { ...idle, pools: [pool(to)] });

  // THEN there is the pool's event, about that pool, and none of the top level's
  expect(events.map((e) => e.reason)).toEqual([reason]);
  expect(events[0].message).toMatch(/^pool spot \(WorkerStack-c-Pool-spot\): /);
});
