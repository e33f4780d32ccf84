import { RegionClients } from '../workflow/context';

/** CloudFormation and S3 calls that change something: each goes through the fence first. */
const WRITES = new Set([
  'createChangeSet',
  'executeChangeSet',
  'deleteChangeSet',
  'deleteStack',
  'continueUpdateRollback',
  'publish',
]);

/**
 * The AWS clients behind a fence: `check(call)` runs before every write and throws (NotLeaderError) when this
 * replica may not write (it lost the lease, or could not renew it in time). Reads pass. One place, so no task can
 * start an AWS write a new leader might start too.
 */
export function fencedAws(
  aws: (region: string) => RegionClients,
  check: (call: string) => void,
): (region: string) => RegionClients {
  const cache = new Map<string, RegionClients>();
  const fence = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, prop, receiver) {
        const value = Reflect.get(t, prop, receiver);
        if (typeof value !== 'function' || !WRITES.has(String(prop))) return value;
        // Every write is async: a refusal is a rejected promise, like any failed call.
        // eslint-disable-next-line @typescript-eslint/require-await -- async only to turn check's throw into a rejection
        return async (...args: unknown[]) => {
          check(String(prop));
          return (value as (...a: unknown[]) => unknown).apply(t, args);
        };
      },
    });
  return (region) => {
    let c = cache.get(region);
    if (!c) {
      const inner = aws(region);
      c = { cfn: fence(inner.cfn), publisher: fence(inner.publisher) };
      cache.set(region, c);
    }
    return c;
  };
}
