import { Condition } from '../../../../lib/model/cluster/schema/status';
import { fail } from '../../../fakes/fake-cloudformation';
import { EXAMPLE, Harness, LAUNCH_TEMPLATE_FAILURE } from '../../../fakes/harness';
import { Json } from '../../../helpers/json';

/** Conditions follow the Kubernetes conventions, and a roll says which files changed. */

let h: Harness;
beforeEach(async () => {
  // GIVEN a cluster created an hour before the clock moves on
  h = new Harness();
  expect((await h.reconcile()).result).toBe('applied');
  h.clock.advance(3_600_000);
});
afterEach(() => h.cleanup());

const setValues = (values: Record<string, unknown>) => (raw: Json) =>
  Object.assign(raw.spec.cloudConfig.values, values);
const ready = (): Condition => h.condition('Ready')!;

describe('lastTransitionTime moves only when the status changes', () => {
  test('a config change: Ready goes False while live differs from desired and True again; conditions that stay False keep their time', async () => {
    // GIVEN Ready=True since the create, Degraded and Stalled False since then
    const since = ready().lastTransitionTime;
    const progressingSince = h.condition('Progressing')!.lastTransitionTime;
    const degradedSince = h.condition('Degraded')!.lastTransitionTime;
    const stalledSince = h.condition('Stalled')!.lastTransitionTime;

    // WHEN the config changes and the change set is executed (one step), a minute later
    h.clock.advance(60_000);
    h.edit(EXAMPLE, setValues({ maxPods: 110 }));
    expect((await h.step()).result).toBe('waiting');

    // THEN Ready is False while the stack rolls (live is not yet desired): its transition time moved
    const rolling = ready();
    expect(rolling).toMatchObject({ status: 'False', reason: 'ChangeSetExecuting', observedGeneration: 2 });
    expect(Date.parse(rolling.lastTransitionTime)).toBeGreaterThan(Date.parse(since));

    // WHEN the update succeeds, a minute later again
    h.clock.advance(60_000);
    expect((await h.reconcile()).result).toBe('applied');

    // THEN Ready is True again, with a new transition time (reason, message and generation are new too)
    expect(ready()).toMatchObject({ status: 'True', reason: 'StackUpdated', observedGeneration: 2 });
    expect(Date.parse(ready().lastTransitionTime)).toBeGreaterThan(Date.parse(rolling.lastTransitionTime));
    // while Progressing went True and back to False during the update: its transition time moved
    expect(h.condition('Progressing')).toMatchObject({ status: 'False' });
    expect(Date.parse(h.condition('Progressing')!.lastTransitionTime)).toBeGreaterThan(Date.parse(progressingSince));
    // and Degraded and Stalled, False all along, kept theirs
    expect(h.condition('Degraded')).toMatchObject({
      status: 'False',
      lastTransitionTime: degradedSince,
      observedGeneration: 2,
    });
    expect(h.condition('Stalled')).toMatchObject({
      status: 'False',
      lastTransitionTime: stalledSince,
      observedGeneration: 2,
    });

    // WHEN an unchanged pass runs later
    h.clock.advance(60_000);
    const settledConditions = h.status().conditions;
    expect((await h.reconcile()).result).toBe('unchanged');

    // THEN no condition moved
    expect(h.status().conditions).toEqual(settledConditions);
  });

  test('a failure then a success change it twice; a repeated failure does not', async () => {
    // GIVEN Ready=True since the create, a change that fails twice before it succeeds, and three attempts allowed
    // (with the default of two, the second failure stalls the cluster)
    const t0 = ready().lastTransitionTime;
    h.edit(EXAMPLE, setValues({ maxPods: 110 }));
    h.cfn.script(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE), fail(LAUNCH_TEMPLATE_FAILURE));
    const deps = () => h.deps({ maxUpdateAttempts: 3 });

    // WHEN the failing passes and the successful one run, a minute apart
    expect((await h.reconcile(EXAMPLE, {}, deps())).result).toBe('failed');
    const t1 = ready().lastTransitionTime;
    expect(h.problem()).toMatchObject({ type: 'Degraded', status: 'True', reason: 'UpdateRolledBack' });
    h.clock.advance(60_000);
    expect((await h.reconcile(EXAMPLE, {}, deps())).result).toBe('failed');
    const t1Again = ready().lastTransitionTime;
    expect(h.problem()).toMatchObject({ type: 'Degraded', status: 'True', reason: 'UpdateRolledBack' });
    h.clock.advance(60_000);
    expect((await h.reconcile(EXAMPLE, {}, deps())).result).toBe('applied');
    const t2 = ready().lastTransitionTime;

    // THEN True→False at the first attempt (live is not desired from then on), unchanged through the second, False→True at the success
    expect(Date.parse(t1)).toBeGreaterThan(Date.parse(t0));
    expect(t1Again).toBe(t1);
    expect(Date.parse(t2)).toBeGreaterThan(Date.parse(t1));
    expect(ready()).toMatchObject({ status: 'True', observedGeneration: 2 });
    expect(h.status().controller?.failures).toBe(0);
  });
});

describe('why it rolled', () => {
  test.each([
    { change: 'maxPods', values: { maxPods: 110 }, expected: 'changed /var/lib/kubelet/config.yaml' },
    {
      change: 'registry mirrors',
      values: { registryMirrors: ['https://mirror2.staging.example.com'] },
      expected: 'changed /etc/containerd/certs.d/docker.io/hosts.toml',
    },
    {
      change: 'Kubernetes version',
      values: { kubernetesVersion: 'v1.32.1' },
      expected:
        'changed /etc/kubernetes/kubelet.env, /opt/bin/worker-stacks-install-kubelet, unit kubelet-install.service, unit kubelet.service',
    },
  ])('a change of $change names the files that changed, while rolling and after', async ({ values, expected }) => {
    // GIVEN a change of config values
    h.edit(EXAMPLE, setValues(values));

    // WHEN one reconcile executes the change set (the stack is then rolling)
    expect((await h.step()).result).toBe('waiting');
    const whileRolling = h.condition('Progressing');
    // and the next reconciles see it through
    expect((await h.reconcile()).result).toBe('applied');

    // THEN Progressing said what changed while the stack updated, and lastConfigChange keeps it
    expect(whileRolling).toMatchObject({ status: 'True', reason: 'ChangeSetExecuting' });
    expect(whileRolling?.message).toMatch(/^rolling the nodes to config [0-9a-f]{12}: /);
    expect(whileRolling?.message).toContain(expected);
    expect(h.status().lastConfigChange).toBe(expected);
    // and so did the log line of the roll
    expect(h.log.entries.filter((e) => e.bindings.cluster === EXAMPLE && e.msg?.includes(expected))).toHaveLength(1);
  });

  test('a change that leaves the node config alone says so: no roll', async () => {
    // GIVEN a change of the pool size only (the config checksum stays)
    const before = h.status();
    h.edit(EXAMPLE, (raw) => {
      raw.spec.pool.maxSize = 6;
    });

    // WHEN one reconcile executes the change set, and the next ones see it through
    expect((await h.step()).result).toBe('waiting');
    const whileUpdating = h.condition('Progressing');
    expect((await h.reconcile()).result).toBe('applied');

    // THEN the stack was updated, the message says the nodes do not roll, and the checksum is the same
    expect(whileUpdating?.message).toBe('updating the stack; no node is replaced (the roll key is unchanged)');
    expect(h.status().pendingRoll).toBeUndefined();
    expect(h.status().cloudConfigChecksum).toBe(before.cloudConfigChecksum);
    expect(h.status().lastConfigChange).toBe(before.lastConfigChange);
    expect(h.status().observedGeneration).toBe(2);
  });
});
