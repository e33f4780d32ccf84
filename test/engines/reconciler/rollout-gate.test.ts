import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { ConfigObject, ConfigObjectStore } from '../../../lib/platform/aws/config-objects';
import { getCondition } from '../../../lib/model/cluster/schema/status';
import { ReconcilerDeps, Synthesizer, TASK } from '../../../lib/engines/reconciler/workflow/context';
import { synthesizeStack } from '../../../lib/engines/synthesis/synthesize';
import { Controller } from '../../../lib/engines/reconciler/runtime/controller';
import { before } from '../../../lib/engines/reconciler/workflow/task';
import { FilePolicySource, POLICY_DIR } from '../../../lib/engines/rollout/policy-source';
import { FakePublisher } from '../../fakes/fake-ports';
import { Harness } from '../../fakes/harness';
import { Json } from '../../helpers/json';

/**
 * The wait-for-wave and clean-config-objects tasks in the real workflow (real synthesis, the file store, the fake
 * CloudFormation): a held roll is staged and requeued, a change that rolls no node is never held, and old config
 * objects go only once the stack has settled.
 */

const MIN = 60_000;
const CANARY = 'canary-a';
const MAIN = 'main-b';

/** The fake bucket as S3 would list it: objects in the order they were stored, a second apart. */
class FakeConfigObjects implements ConfigObjectStore {
  public deletes: string[][] = [];
  constructor(private readonly publisher: FakePublisher) {}
  public async list(bucket: string, prefix: string): Promise<ConfigObject[]> {
    return [...this.publisher.objects.keys()]
      .map((k, i) => ({ full: k, i }))
      .filter((o) => o.full.startsWith(`${bucket}/${prefix}`))
      .map((o) => ({ key: o.full.slice(bucket.length + 1), lastModified: new Date(o.i * 1000) }));
  }
  public async delete(bucket: string, keys: readonly string[]) {
    this.deletes.push([...keys]);
    for (const k of keys) this.publisher.objects.delete(`${bucket}/${k}`);
    return { deleted: [...keys], errors: [] };
  }
}

let h: Harness;
let objects: FakeConfigObjects;
afterEach(() => h.cleanup());

function deps(extra: Partial<ReconcilerDeps> = {}): ReconcilerDeps {
  const d = h.deps(extra);
  return { ...d, aws: () => ({ cfn: h.cfn, publisher: h.publisher, configObjects: objects }) };
}

async function pass(d = deps(), hooks = [] as ReturnType<typeof before>[]) {
  const controller = new Controller(d, {
    concurrency: 4,
    hooks,
    policies: new FilePolicySource({ clustersDir: h.clustersDir }),
  });
  return controller.runUntilSettled({
    deadlineMs: 30 * MIN,
    now: () => h.clock.ms,
    sleep: async (ms) => h.cfn.advance(ms),
  });
}

beforeEach(async () => {
  h = new Harness({ clusters: [] });
  objects = new FakeConfigObjects(h.publisher);
  h.addCluster(CANARY, (raw) => (raw.metadata.labels = { ring: 'canary' }));
  h.addCluster(MAIN, (raw) => (raw.metadata.labels = { ring: 'main' }));
  fs.mkdirSync(path.join(h.clustersDir, POLICY_DIR));
  fs.writeFileSync(
    path.join(h.clustersDir, POLICY_DIR, 'fleet.yaml'),
    stringify({
      apiVersion: 'worker-stacks.io/v1alpha1',
      kind: 'WorkerRolloutPolicy',
      metadata: { name: 'fleet' },
      spec: {
        waves: [{ name: 'canary', selector: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1, soak: '1h' }],
      },
    }),
  );
  const created = await pass();
  expect([...created.values()].map((o) => o.result)).toEqual(['applied', 'applied']);
});

const maxPods = (n: number) => (raw: Json) => (raw.spec.cloudConfig.values.maxPods = n);

test('a roll of the remainder waits for the canary and its soak: staged and requeued meanwhile, then applied', async () => {
  // GIVEN a change that rolls both clusters' nodes
  h.edit(CANARY, maxPods(60));
  h.edit(MAIN, maxPods(60));
  const liveBefore = h.status(MAIN).cloudConfigChecksum;

  // WHEN the reconciler runs
  const outcomes = await pass();

  // THEN the canary rolled; the other is held, requeued after the soak, its new config published and shown as desired
  expect(outcomes.get(CANARY)?.result).toBe('applied');
  const held = outcomes.get(MAIN)!;
  expect(held).toMatchObject({
    result: 'held',
    rollout: { policy: 'fleet', wave: 'remainder', event: 'held', reason: 'WaitingForWave' },
  });
  // (decided while the canary was still rolling: looked at again in two minutes)
  expect(held.requeueAfterMs).toBe(2 * MIN);
  const s = h.status(MAIN);
  expect(s.cloudConfigChecksum).toBe(liveBefore);
  expect(h.cfn.peek(h.stackName(MAIN))?.outputs.ConfigChecksum).toBe(liveBefore);
  expect(s.desiredChecksum).not.toBe(liveBefore);
  expect(s.rollout).toMatchObject({ policy: 'fleet', wave: 'remainder', stagedChecksum: s.desiredChecksum });
  expect([...h.publisher.objects.keys()].some((k) => k.endsWith(`clusters/${MAIN}/${s.desiredChecksum}.yaml`))).toBe(
    true,
  );
  expect(getCondition(s, 'Progressing')).toMatchObject({ status: 'False', reason: 'WaitingForWave' });
  expect(getCondition(s, 'Ready')).toMatchObject({ status: 'False', reason: 'WaitingForWave' });
  expect(getCondition(s, 'Stalled')?.status).toBe('False');

  // WHEN it is looked at again two minutes later, with the canary settled
  h.cfn.advance(2 * MIN);
  const soaking = (await pass()).get(MAIN)!;
  // THEN it waits for the rest of the canary's soak, and is looked at again when it ends
  expect(soaking).toMatchObject({ result: 'held' });
  expect(soaking.message).toContain('waits for wave canary to soak 1h: canary-a settled less than 1h ago');
  expect(soaking.requeueAfterMs).toBeGreaterThan(55 * MIN);
  expect(soaking.requeueAfterMs).toBeLessThanOrEqual(58 * MIN);

  // WHEN the soak has passed
  h.cfn.advance(soaking.requeueAfterMs!);
  const later = await pass();

  // THEN it rolls, and says how long it waited in its wave
  expect(later.get(MAIN)?.result).toBe('applied');
  const started = h.log.of(MAIN).find((e) => e.msg === 'wave remainder: the roll may start');
  expect((started?.obj as { waitedMs?: number }).waitedMs).toBeGreaterThanOrEqual(58 * MIN);
  expect(h.status(MAIN).cloudConfigChecksum).toBe(h.status(MAIN).desiredChecksum);
});

test('a new AMI (the config checksum unchanged) waits for its wave like a new config', async () => {
  // GIVEN a new machine image on both clusters: their nodes roll, their config checksum does not change
  const ami = (raw: Json) => (raw.spec.pool.machineImage = 'ami-0fedcba9876543210');
  h.edit(CANARY, ami);
  h.edit(MAIN, ami);
  const live = h.status(MAIN).cloudConfigChecksum;
  // WHEN the reconciler runs
  const outcomes = await pass();
  // THEN the canary rolled and the other waits for it, its stack untouched
  expect(outcomes.get(CANARY)?.result).toBe('applied');
  expect(outcomes.get(MAIN)).toMatchObject({ result: 'held', rollout: { reason: 'WaitingForWave' } });
  expect(h.status(MAIN).desiredChecksum).toBe(live);
  expect(h.cfn.started.filter((x) => x.stackName === h.stackName(MAIN) && x.kind === 'update')).toEqual([]);
  // (each says it from its own templates: the canary's live roll key is its new one, the held one's is pending)
  expect(h.status(CANARY).rollKey).toMatch(/^rk2:/);
  expect(h.status(CANARY).pendingRoll).toBeUndefined();
  expect(h.status(MAIN)).toMatchObject({ pendingRoll: 'image' });
  expect(h.status(MAIN).rollKey).not.toBe(h.status(MAIN).desiredRollKey);
});

test('a release that writes every launch template anew (objects unchanged) waits for its wave, and says it is the release', async () => {
  // GIVEN the fleet last applied by release 0.1.0 (a tag edit: a change set that replaces no node)
  for (const name of [CANARY, MAIN]) h.edit(name, (raw) => (raw.spec.tags = { ...raw.spec.tags, release: 'a' }));
  const applied = await pass(deps({ release: '0.1.0' }));
  expect([...applied.values()].map((o) => o.result)).toEqual(['applied', 'applied']);
  expect(h.cfn.started.filter((x) => x.kind === 'update')).toHaveLength(2);
  // and release 0.2.0, whose code writes one more property into every launch template (what 8909f17 → 22a9a8e did
  // with NetworkInterfaces): the objects, their configs and their checksums are unchanged
  const release020: Synthesizer = async (cluster, opts) => {
    const s = synthesizeStack(cluster, opts);
    const t = JSON.parse(s.templateBody);
    for (const r of Object.values(t.Resources as Record<string, Json>))
      if (r.Type === 'AWS::EC2::LaunchTemplate') r.Properties.LaunchTemplateData.EbsOptimized = true;
    return { ...s, templateBody: JSON.stringify(t) };
  };
  const updates = h.cfn.started.length;

  // WHEN the new release's daemon runs
  const outcomes = await pass(deps({ release: '0.2.0', code: 'release-0.2.0', synthesizer: release020 }));

  // THEN the canary rolls first; the other waits for the canary's wave, its stack untouched, and both say why
  expect(outcomes.get(CANARY)?.result).toBe('applied');
  expect(outcomes.get(MAIN)).toMatchObject({ result: 'held', rollout: { reason: 'WaitingForWave' } });
  expect(h.cfn.started.slice(updates).map((x) => x.stackName)).toEqual([h.stackName(CANARY)]);
  const why = 'release 0.1.0 → 0.2.0: launch template: EbsOptimized';
  expect(h.status(MAIN).pendingRoll).toBe(why);
  expect(outcomes.get(MAIN)?.message).toContain(`replaces nodes: ${why}`);
  expect(h.log.of(CANARY).some((e) => e.msg?.includes(`rolling the nodes (${why})`))).toBe(true);
  expect(h.status(MAIN).cloudConfigChecksum).toBe(h.status(MAIN).desiredChecksum);
});

test('spec.rollout.hold stages the config without rolling; a change that rolls no node still applies; removing the hold rolls', async () => {
  // GIVEN a canary on hold, with a new config and a new tag (tags never roll nodes)
  h.edit(CANARY, (raw) => {
    raw.spec.rollout = { hold: true };
    raw.spec.cloudConfig.values.maxPods = 61;
  });
  const live = h.status(CANARY).cloudConfigChecksum;

  // WHEN the reconciler runs
  const held = await pass();

  // THEN it is held, staged, and the stack untouched
  expect(held.get(CANARY)).toMatchObject({ result: 'held' });
  expect(getCondition(h.status(CANARY), 'Progressing')).toMatchObject({ reason: 'Held' });
  expect(h.status(CANARY).rollout?.stagedChecksum).toBe(h.status(CANARY).desiredChecksum);
  expect(h.cfn.peek(h.stackName(CANARY))?.outputs.ConfigChecksum).toBe(live);

  // WHEN only a tag changes on a held cluster whose config is as live
  h.edit(CANARY, (raw) => {
    raw.spec.cloudConfig.values.maxPods = 58;
    raw.spec.tags = { ...(raw.spec.tags ?? {}), costCenter: 'c-42' };
  });
  const tagged = await pass();
  // THEN it applies: a hold holds rolls only
  expect(tagged.get(CANARY)?.result).toBe('applied');
  expect(h.cfn.peek(h.stackName(CANARY))?.outputs.ConfigChecksum).toBe(live);

  // WHEN the config changes again and the hold is removed
  h.edit(CANARY, (raw) => {
    raw.spec.cloudConfig.values.maxPods = 62;
    delete raw.spec.rollout;
  });
  const released = await pass();
  // THEN it rolls
  expect(released.get(CANARY)?.result).toBe('applied');
  expect(h.cfn.peek(h.stackName(CANARY))?.outputs.ConfigChecksum).not.toBe(live);
});

test('old config objects are deleted once the stack settles, never while it rolls; live, desired and the newest N stay', async () => {
  // GIVEN three more configs rolled onto the canary, and a cleanup that looks at the stack each time it runs
  const seen: string[] = [];
  const hooks = [
    before(
      TASK.cleanConfigObjects,
      (ctx, _task, found) =>
        void seen.push(`${found.stack?.status}:${ctx.recorder.controller.executing ? 'executing' : 'idle'}`),
    ),
  ];
  const d = deps({ keepConfigObjects: 1 });
  const keys = () =>
    [...h.publisher.objects.keys()].filter((k) => k.includes(`clusters/${CANARY}/`) && /\.yaml$/.test(k));
  const checksums: string[] = [h.status(CANARY).cloudConfigChecksum!];
  for (const n of [70, 71, 72]) {
    h.edit(CANARY, maxPods(n));
    const o = await pass(d, hooks);
    expect(o.get(CANARY)?.result).toBe('applied');
    checksums.push(h.status(CANARY).cloudConfigChecksum!);
  }

  // THEN cleanup ran only on settled stacks, once per settled config, and kept the live one and the newest other
  expect(seen.every((x) => /^(CREATE|UPDATE)_COMPLETE:idle$/.test(x))).toBe(true);
  expect(
    keys()
      .map((k) => k.split('/').pop()!.replace('.yaml', ''))
      .sort(),
  ).toEqual([checksums[2], checksums[3]].sort());
  expect(
    objects.deletes
      .flat()
      .map((k) => k.split('/').pop()!.replace('.yaml', ''))
      .sort(),
  ).toEqual([checksums[0], checksums[1]].sort());
  expect(h.status(CANARY).controller?.cleanedFor).toBe(checksums[3]);
  // and an unchanged pass lists nothing again
  const before2 = objects.deletes.length;
  await pass(d, hooks);
  expect(objects.deletes.length).toBe(before2);
});
