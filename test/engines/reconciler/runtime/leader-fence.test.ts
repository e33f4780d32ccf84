import { NotLeaderError } from '../../../../lib/core/errors';
import { RegionClients } from '../../../../lib/engines/reconciler/workflow/context';
import { classifyError } from '../../../../lib/engines/reconciler/workflow/classify';
import { fencedAws } from '../../../../lib/engines/reconciler/runtime/leader-fence';

/** The AWS writes of a replica that may not write (lost or unrenewed lease) are refused before they are sent; reads pass. */

function recordingClients(calls: string[]): RegionClients {
  const fn = (name: string) => async () => void calls.push(name);
  return {
    cfn: Object.fromEntries(
      [
        'listStacks',
        'describeStack',
        'createChangeSet',
        'describeChangeSet',
        'waitForChangeSet',
        'executeChangeSet',
        'deleteChangeSet',
        'stackEvents',
        'operationEvents',
        'getTemplate',
        'waitForStack',
        'deleteStack',
        'continueUpdateRollback',
      ].map((n) => [n, fn(n)]),
    ) as unknown as RegionClients['cfn'],
    publisher: { publish: fn('publish'), templateUrl: () => 'https://x' } as unknown as RegionClients['publisher'],
  };
}

test.each([
  ['createChangeSet', true],
  ['executeChangeSet', true],
  ['deleteChangeSet', true],
  ['deleteStack', true],
  ['continueUpdateRollback', true],
  ['publish', true],
  ['describeStack', false],
  ['listStacks', false],
  ['describeChangeSet', false],
  ['operationEvents', false],
])('%s behind the fence of a replica that may not write: refused=%s', async (call, refused) => {
  // GIVEN clients fenced by a check that says "not the leader"
  const calls: string[] = [];
  const aws = fencedAws(
    () => recordingClients(calls),
    (what) => {
      throw new NotLeaderError('me_1', what);
    },
  );
  const clients = aws('eu-west-1');
  const target = call === 'publish' ? clients.publisher : clients.cfn;

  // WHEN the call is made
  // Any method by its name: each is called without arguments, as the recording fakes accept
  const method = (target as unknown as Record<string, () => Promise<unknown>>)[call];
  const result = method().then(
    () => 'sent',
    (e: unknown) => e,
  );

  // THEN a write is refused before it reaches AWS (as a NotLeaderError, which the reconciler requeues without recording), a read is sent
  const r = await result;
  if (refused) {
    expect(r).toBeInstanceOf(NotLeaderError);
    expect(calls).toEqual([]);
    expect(classifyError(r)).toEqual({ kind: 'conflict' });
  } else {
    expect(r).toBe('sent');
    expect(calls).toEqual([call]);
  }
});

test('the fenced clients of a region are made once (the controller keeps them)', () => {
  // GIVEN a fenced factory, WHEN asked twice for one region, THEN the same clients come back
  let made = 0;
  const aws = fencedAws(
    () => (made++, recordingClients([])),
    () => undefined,
  );
  expect(aws('eu-west-1')).toBe(aws('eu-west-1'));
  expect(made).toBe(1);
});
