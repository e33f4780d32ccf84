import { EXAMPLE, Harness } from '../../../fakes/harness';

/** Two releases of the daemon never take turns re-applying one cluster: the older one knows it is older. */

let h: Harness;
afterEach(() => h.cleanup());

describe('check-version', () => {
  test('the release that executed a change set is recorded with its template code', async () => {
    // GIVEN a daemon of release 0.4.0
    h = new Harness();

    // WHEN it creates the stack
    expect((await h.reconcile(EXAMPLE, {}, h.deps({ release: '0.4.0' }))).result).toBe('applied');

    // THEN status says which release and code applied it
    expect(h.status().controller?.appliedBy).toEqual({ version: '0.4.0', code: 'test-code' });
  });

  test.each([
    // [release that applied last, this daemon's release, this daemon's code, expected result, change sets created]
    ['0.4.0', '0.3.9', 'test-code', 'outdated', 0],
    ['0.4.0', '0.4.0-rc.1', 'test-code', 'outdated', 0],
    ['0.4.0', '0.4.0', 'other-build', 'applied', 1],
    ['0.4.0', '0.5.0', 'new-code', 'applied', 1],
  ])('applied by %s, this daemon %s (%s) → %s', async (appliedBy, ours, code, expected, changeSets) => {
    // GIVEN a cluster a daemon of `appliedBy` applied, and then an edit that needs a new change set
    h = new Harness();
    await h.reconcile(EXAMPLE, {}, h.deps({ release: appliedBy }));
    h.edit(EXAMPLE, (raw) => {
      raw.spec.cloudConfig.values.maxPods = 77;
    });
    h.cfn.resetCalls();
    const writes = h.statusWrites;

    // WHEN a daemon of release `ours` reconciles it
    const outcome = await h.reconcile(EXAMPLE, {}, h.deps({ release: ours, code }));

    // THEN an older daemon changes nothing, writes nothing, and says to upgrade; a newer or equal one applies
    expect(outcome.result).toBe(expected);
    expect(h.cfn.count('createChangeSet')).toBe(changeSets);
    if (expected === 'outdated') {
      expect(h.statusWrites).toBe(writes);
      expect(outcome.message).toMatch(
        new RegExp(
          `runs worker-stacks ${ours.replace(/\./g, '\\.')}, but ${appliedBy.replace(/\./g, '\\.')} applied this cluster last; upgrade this daemon`,
        ),
      );
      expect(outcome.requeueAfterMs).toBeGreaterThan(0);
    } else {
      expect(h.status().controller?.appliedBy).toEqual({ version: ours, code });
    }
  });
});
