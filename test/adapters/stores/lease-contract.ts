import { LeaderElector } from '../../../lib/platform/kube/leader-election';
import { leaderElectorFor } from '../../../lib/adapters/stores/registry';
import { ElectionLogger } from '../../../lib/adapters/stores/store-provider';
import { eventually } from '../../helpers/eventually';
import { CapabilityFixture, required } from './capability-fixture';
import { recordSuite } from './contract-coverage';

const SILENT: ElectionLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
/** Short leases, so a takeover is seconds away. */
const TIMING = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500, shardCheckMs: 60_000 };

/** The leader election capability: of two daemon replicas on one store, one acts; the other takes over when it stops. */
export function leaseContract(kind: string, makeFixture: () => Promise<CapabilityFixture>): void {
  recordSuite(kind, 'leaderElection');
  describe(`${kind} store: leader election contract`, () => {
    let f: CapabilityFixture | undefined;
    const running: { stop: AbortController; run: Promise<void> }[] = [];
    afterEach(async () => {
      for (const r of running.splice(0)) {
        r.stop.abort();
        await r.run;
      }
      await f?.dispose();
      f = undefined;
    });
    const start = (e: LeaderElector) => {
      const stop = new AbortController();
      const r = { stop, run: e.run(stop.signal) };
      running.push(r);
      return r;
    };

    test('one of two replicas leads and may write; the other is fenced; when the leader stops, the other takes over', async () => {
      // GIVEN two replicas of the daemon on the same store
      f = await makeFixture();
      const choice = f.choice;
      const settings = { ...TIMING, ...f.world.leaderSettings };
      const [a, b] = ['replica-a', 'replica-b'].map((identity) =>
        required(leaderElectorFor(choice, { ...settings, identity }, SILENT), 'an elector'),
      );

      // WHEN both campaign, a first
      const runA = start(a);
      await eventually(() => a.isLeader(), 'replica-a leads');
      start(b);
      await eventually(() => b.reachable, 'replica-b reaches the lease');

      // THEN a leads and may write; b does not lead and its writes are fenced
      expect([a.isLeader(), b.isLeader()]).toEqual([true, false]);
      expect(a.canWrite()).toBe(true);
      expect(() => {
        b.check('an AWS write');
      }).toThrow();

      // WHEN a stops cleanly, THEN b takes over
      runA.stop.abort();
      await runA.run;
      await eventually(() => b.isLeader(), 'replica-b leads', 20_000);
      expect(b.canWrite()).toBe(true);
    });
  });
}
