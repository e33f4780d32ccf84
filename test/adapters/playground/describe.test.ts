import { describe as describeRow } from '../../../lib/adapters/playground/steps';
import { StatusRow } from '../../../lib/adapters/stores/status-rows';

/** The playground's progress line: the shared stack's columns, then the pools of a cluster that has stacks of them. */

const row = (over: Partial<StatusRow>): StatusRow => ({
  cluster: 'apps-eu1',
  generation: 1,
  inSync: true,
  stack: 'WorkerStack-apps-eu1',
  stackStatus: 'CREATE_COMPLETE',
  ready: 'False',
  reason: 'Idle',
  message: 'nothing in progress',
  liveChecksum: '13f4387e4af4aaaa',
  paused: false,
  ...over,
});
const pool = (name: string, ready: string, stackStatus?: string) => ({
  pool: name,
  stack: `WorkerStack-apps-eu1-Pool-${name}`,
  inSync: ready === 'True',
  ready,
  stackStatus,
});

test.each([
  ['a single-pool cluster: no pools part', row({ ready: 'True' }), /nothing in progress$/],
  [
    'a shared stack done while two pools are still being created',
    row({ pools: [pool('spot', 'Unknown', 'CREATE_IN_PROGRESS'), pool('arm', 'Unknown')] }),
    /nothing in progress; pools 0\/2 ready, spot CREATE_IN_PROGRESS, arm -$/,
  ],
  [
    'the recorded poolsReady (which counts the pool default) wins, only pools not ready are named',
    row({
      status: { poolsReady: '2/3' } as StatusRow['status'],
      pools: [pool('spot', 'True', 'CREATE_COMPLETE'), pool('arm', 'False', 'UPDATE_IN_PROGRESS')],
    }),
    /; pools 2\/3 ready, arm UPDATE_IN_PROGRESS$/,
  ],
])('%s', (_what, r, line) => {
  // WHEN
  const text = describeRow(r);
  // THEN
  expect(text).toMatch(/^apps-eu1 +CREATE_COMPLETE +Ready=/);
  expect(text).toMatch(line);
});
