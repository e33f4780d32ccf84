import { ClusterStatus } from '../../../lib/model/cluster/schema/status';
import { fromKubeStatus, SHORT_CHECKSUM_LENGTH, toKubeStatus } from '../../../lib/platform/kube/printer-status';

const status: ClusterStatus = {
  cloudConfigChecksum: 'a'.repeat(64),
  desiredChecksum: 'b'.repeat(64),
  observedGeneration: 3,
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason: 'StackComplete',
      message: 'ok',
      lastTransitionTime: '2026-01-01T00:00:00.000Z',
      observedGeneration: 3,
    },
  ],
};

test('the status written to the custom resource carries the checksum prefixes of the printer columns', () => {
  // WHEN
  const kube = toKubeStatus(status);
  // THEN
  expect(kube.desiredChecksumShort).toBe('b'.repeat(SHORT_CHECKSUM_LENGTH));
  expect(kube.cloudConfigChecksumShort).toBe('a'.repeat(SHORT_CHECKSUM_LENGTH));
});

test('a status without checksums has no prefixes, and stale prefixes are not kept', () => {
  // GIVEN a status whose checksums were cleared (a stack being recreated)
  const stale = { ...toKubeStatus(status), cloudConfigChecksum: undefined, desiredChecksum: undefined };
  // WHEN
  const kube = toKubeStatus(stale);
  // THEN
  expect(kube).not.toHaveProperty('desiredChecksumShort');
  expect(kube).not.toHaveProperty('cloudConfigChecksumShort');
});

test("reading the custom resource's status gives back exactly the reconciler's status", () => {
  // WHEN
  const read = fromKubeStatus(JSON.parse(JSON.stringify(toKubeStatus(status))));
  // THEN
  expect(read).toEqual({ status });
});

test('a custom resource without status reads as the empty status; a wrong field is named', () => {
  expect(fromKubeStatus(undefined)).toEqual({ status: { conditions: [] } });
  expect(fromKubeStatus({ conditions: [], observedGeneration: 'x' })).toEqual({
    problem: expect.stringMatching(/^status\.observedGeneration: /),
  });
});

test.each<[string, Partial<ClusterStatus>, string | undefined]>([
  ['nothing pending', {}, undefined],
  ['the shared stack', { pendingRoll: 'image' }, 'image'],
  [
    'the shared stack and a pool',
    {
      pendingRoll: 'config',
      pools: [
        { name: 'spot', stackName: 'WorkerStack-c-Pool-spot', pendingRoll: 'image, subnets', conditions: [] },
        { name: 'arm', stackName: 'WorkerStack-c-Pool-arm', conditions: [] },
      ],
    },
    'config; spot: image, subnets',
  ],
])('the Pending column says every stack’s pending replacement: %s', (_what, extra, shown) => {
  // WHEN
  const kube = toKubeStatus({ ...status, ...extra });
  // THEN it is derived on write, and dropped on read
  expect(kube.pendingRolls).toBe(shown);
  expect(fromKubeStatus(JSON.parse(JSON.stringify(kube)))).toEqual({ status: { ...status, ...extra } });
});
