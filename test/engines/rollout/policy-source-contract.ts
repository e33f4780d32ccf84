import { WorkerStacksError } from '../../../lib/core/errors';
import { RolloutPolicySource } from '../../../lib/engines/rollout/policy-source';
import { eventually } from '../../helpers/eventually';

/**
 * The rollout-policy source contract: what the gate, the daemon and `rollout pause|resume` rely on, wherever the
 * policies live. Every source runs it unchanged (test/engines/rollout/file-policy-source.contract.test.ts and, against the
 * real API server, test/adapters/stores/kubernetes-policy-source.test.ts); it talks to the source only through
 * RolloutPolicySource, and to the objects only as a user would (a file, `kubectl apply`), through the fixture.
 */
export interface PolicySourceFixture {
  readonly source: RolloutPolicySource;
  /** Creates or replaces the policy as a user would. */
  put(raw: UserPolicy): Promise<void>;
  /** Deletes it as a user would. */
  remove(name: string): Promise<void>;
  /** How the source names the policy `name` in problems (`clusters/rollout-policies/x.yaml`, `WorkerRolloutPolicy/x`). */
  sourceOf(name: string): string;
  dispose(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a user's object, reshaped freely by the tests
export type UserPolicy = any;

/** A policy of two waves as a user writes it (no defaults filled in). */
export function policyNamed(name: string, mutate: (p: UserPolicy) => void = () => undefined): UserPolicy {
  const p: UserPolicy = {
    apiVersion: 'worker-stacks.io/v1alpha1',
    kind: 'WorkerRolloutPolicy',
    metadata: { name },
    spec: {
      waves: [
        { name: 'canary', selector: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1, soak: '1h' },
        {
          name: 'early',
          selector: { matchExpressions: [{ key: 'ring', operator: 'In', values: ['early'] }] },
          maxConcurrent: '10%',
          soak: '30m',
          maintenanceWindows: [{ schedule: '0 2 * * 1-5', duration: '4h', timeZone: 'Europe/Berlin' }],
        },
      ],
      maxConcurrentRolls: 20,
    },
  };
  mutate(p);
  return p;
}

export function policySourceContract(kind: string, makeFixture: () => Promise<PolicySourceFixture>): void {
  describe(`${kind} policy source contract`, () => {
    let f: PolicySourceFixture;
    beforeEach(async () => {
      f = await makeFixture();
    });
    afterEach(async () => {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
      await f?.dispose();
    });

    test('no policy: none, and no problem', async () => {
      expect(await f.source.load()).toEqual({ policies: [], problems: [] });
    });

    test('a valid policy loads with the defaults filled in, named where it lives', async () => {
      // GIVEN
      await f.put(policyNamed('fleet'));
      // WHEN
      const { policies, problems } = await f.source.load();
      // THEN
      expect(problems).toEqual([]);
      expect(policies.map((p) => p.source)).toEqual([f.sourceOf('fleet')]);
      expect(policies[0].policy.metadata.name).toBe('fleet');
      expect(policies[0].policy.spec).toMatchObject({
        haltOnFailure: true,
        paused: false,
        maxConcurrentRolls: 20,
        remainder: { name: 'remainder', maxConcurrent: '25%', soak: '0s' },
      });
      expect(policies[0].policy.spec.waves.map((w) => `${w.name} ${w.maxConcurrent} ${w.soak}`)).toEqual([
        'canary 1 1h',
        'early 10% 30m',
      ]);
    });

    test('an invalid policy: every problem at once, naming the object and the field; the valid ones still load', async () => {
      // GIVEN a good policy, and one whose window has a bad cron schedule and a bad time zone (no store refuses those)
      await f.put(policyNamed('fleet', (p) => (p.spec.clusterSelector = { matchLabels: { tier: 'a' } })));
      await f.put(
        policyNamed(
          'broken',
          (p) => (p.spec.waves[1].maintenanceWindows[0] = { schedule: '0 2 * *', duration: '4h', timeZone: 'Berlin' }),
        ),
      );
      // WHEN
      const { policies, problems } = await f.source.load();
      // THEN
      expect(policies.map((p) => p.policy.metadata.name)).toEqual(['fleet']);
      expect(problems.map((p) => `${p.file}: ${p.path}`)).toEqual([
        `${f.sourceOf('broken')}: spec.waves[1].maintenanceWindows[0].schedule`,
        `${f.sourceOf('broken')}: spec.waves[1].maintenanceWindows[0].timeZone`,
      ]);
      expect(problems[1].message).toContain('"Berlin" is not an IANA time zone');
    });

    test('setPaused sets and clears spec.paused, and nothing else', async () => {
      // GIVEN
      await f.put(policyNamed('fleet'));
      const before = (await f.source.load()).policies[0].policy.spec;
      // WHEN paused, THEN
      await f.source.setPaused('fleet', true);
      const paused = (await f.source.load()).policies[0].policy.spec;
      expect(paused).toEqual({ ...before, paused: true });
      // WHEN resumed, THEN as before
      await f.source.setPaused('fleet', false);
      expect((await f.source.load()).policies[0].policy.spec).toEqual(before);
    });

    test('setPaused of an unknown policy is an error naming it; nothing is created', async () => {
      // WHEN
      const r = f.source.setPaused('nope', true);
      // THEN
      await expect(r).rejects.toThrow(WorkerStacksError);
      await expect(f.source.setPaused('nope', false)).rejects.toThrow(/no rollout policy nope/);
      expect((await f.source.load()).policies).toEqual([]);
    });

    test('watch calls back on a change of a policy (an edit, a new one, a deletion), and stops when told', async () => {
      // GIVEN a watch on a source holding one policy
      await f.put(policyNamed('fleet'));
      let calls = 0;
      const stop = f.source.watch!(() => calls++);
      await f.source.load(); // a watching source has listed
      await new Promise((r) => setTimeout(r, 300)); // the watch is established (a file watch, or a list + watch)
      // WHEN a user edits it, THEN
      await f.put(policyNamed('fleet', (p) => (p.spec.waves[0].soak = '2h')));
      await eventually(() => calls > 0, 'the watch reports the edit');
      // WHEN another is added, and then removed, THEN each is reported
      let seen = calls;
      await f.put(policyNamed('second', (p) => (p.spec.clusterSelector = { matchLabels: { tier: 'b' } })));
      await eventually(() => calls > seen, 'the watch reports the new policy');
      seen = calls;
      await f.remove('second');
      await eventually(() => calls > seen, 'the watch reports the deletion');
      // WHEN the watch is stopped and the policy edited again, THEN nothing more is reported
      stop();
      await new Promise((r) => setTimeout(r, 500));
      seen = calls;
      await f.put(policyNamed('fleet', (p) => (p.spec.waves[0].soak = '3h')));
      await new Promise((r) => setTimeout(r, 700));
      expect(calls).toBe(seen);
    });
  });
}
