import fc from 'fast-check';
import { simProperty, STATS } from './commands';

/**
 * The reconciler's contract under Sieve's three fault classes (crashes between steps, stale reads, unobserved
 * events) plus leader changes, AWS errors, held and rolled-back stacks and out-of-band changes: seeded, so every
 * run is the same run, and a failure prints its seed and shrunk path (replay: test/sim/regressions.test.ts).
 */
describe('the reconciler under simulated faults', () => {
  test('keeps every invariant on every schedule, and converges once the faults stop', async () => {
    // GIVEN seeded schedules of faults and actions  WHEN the real runtime plays them  THEN no invariant breaks
    await fc.assert(simProperty(), { seed: 20261125, numRuns: Number(process.env.SIM_RUNS ?? 300), endOnFailure: false });
    expect(STATS.schedules).toBeGreaterThan(0);
  });
});
