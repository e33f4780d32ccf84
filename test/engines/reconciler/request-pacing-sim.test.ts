import { FleetSim } from '../../fakes/fleet-sim';
import { TokenBucketQuota } from '../../fakes/fake-cloudformation';
import { DEFAULT_CLOUDFORMATION_RATES } from '../../../lib/platform/aws/request-rate';

/**
 * The daemon as shipped paces its own CloudFormation requests (lib/platform/aws/request-rate.ts): a fleet that all
 * starts at once (every cluster created, then every cluster rolled by one template change) against a CloudFormation
 * whose quotas are the daemon's rates, with no latency to space the requests out, is never throttled; the same fleet
 * unpaced is. Every reconcile runs on the fake clock, driven as the daemon drives them.
 */

jest.setTimeout(300_000);

const MIN = 60_000;
const quota = (r: TokenBucketQuota): TokenBucketQuota => ({ ratePerSecond: r.ratePerSecond, burst: r.burst });
const READ = quota(DEFAULT_CLOUDFORMATION_RATES.read);
const WRITE = quota(DEFAULT_CLOUDFORMATION_RATES.write);
const QUOTAS = {
  DescribeStacks: READ,
  ListStacks: READ,
  DescribeChangeSet: READ,
  DescribeStackEvents: READ,
  GetTemplate: READ,
  CreateChangeSet: WRITE,
  ExecuteChangeSet: WRITE,
  DeleteChangeSet: WRITE,
  DeleteStack: WRITE,
  ContinueUpdateRollback: WRITE,
};
const NAMES = Array.from({ length: 24 }, (_, i) => `c-${String(i).padStart(2, '0')}`);

async function createAndRoll(paced: boolean) {
  const sim = new FleetSim(NAMES, () => ({}), {
    quotas: QUOTAS,
    clientRates: paced ? undefined : false,
    concurrency: 100,
    workers: 8,
  });
  try {
    await sim.runFor(60 * MIN);
    const created = NAMES.filter((n) => sim.live(n)).length;
    sim.starts.length = 0;
    sim.changeTemplate('# kubelet tuning');
    await sim.runFor(3 * 60 * MIN);
    const fake = sim.cfn(NAMES[0]);
    return {
      created,
      rolled: new Set(sim.starts.map((s) => s.name)).size,
      throttled: [...fake.throttledCalls.values()].reduce((a, b) => a + b, 0),
      paced: [...(sim.limiters.values().next().value?.waited.values() ?? [])].reduce((a, w) => a + w.requests, 0),
    };
  } finally {
    sim.cleanup();
  }
}

test('paced by the daemon, a fleet created and rolled all at once is never throttled; unpaced, it is', async () => {
  // WHEN the same fleet is created and rolled, paced as shipped and unpaced
  const paced = await createAndRoll(true);
  const unpaced = await createAndRoll(false);

  // THEN both end with every cluster created and rolled once (throttling is transient: requeued, then done)
  expect(paced).toMatchObject({ created: NAMES.length, rolled: NAMES.length });
  expect(unpaced).toMatchObject({ created: NAMES.length, rolled: NAMES.length });
  // AND paced: no request throttled, some held back by the limiter; unpaced: throttled
  expect(paced.throttled).toBe(0);
  expect(paced.paced).toBeGreaterThan(0);
  expect(unpaced.throttled).toBeGreaterThan(0);
});
