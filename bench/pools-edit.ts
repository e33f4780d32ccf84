/**
 * Node pools (issue 23, item 9): a one-pool edit of a cluster whose other pools are rolling. The daemon (runDaemon +
 * Controller, real CDK synthesis) watches a file-store directory of settled 4-pool clusters (bench/pools.ts
 * pooledCluster: default, spot, arm, gpu); for one cluster the labels of its arm and gpu pools change (their stacks
 * update and stay in progress on the fake's clock: their nodes are rolling), then the spot pool's labels change: how
 * long from that save until CreateChangeSet is called for the spot pool's stack.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { runDaemon } from '../lib/engines/reconciler/runtime/daemon';
import { poolStackName } from '../lib/core/naming';
import { Json } from '../test/helpers/json';
import { editCluster } from './edit';
import { pooledCluster } from './pools';
import { BenchOptions, codeState, figure, loadavg1, Section } from './report';
import { fmt, fmtSummary, sleep, summarize, table } from './stats';
import { World } from './world';

const ACCOUNT = '111111111111';
/** The pools that roll while the edit is made, and the one edited. */
const ROLLING = ['arm', 'gpu'];
const EDITED = 'spot';

interface Edit {
  readonly cluster: string;
  /** From the save of the spot pool's edit to its stack's CreateChangeSet. */
  readonly changeSetMs: number;
  /** The rolling pools' stacks when that change set was created. */
  readonly others: string;
}

/** Sets a label on the named pools of the raw object. */
function relabel(raw: Json, pools: readonly string[], value: string): void {
  for (const p of raw.spec.pools as Json[])
    if (pools.includes(p.name as string)) p.labels = { ...p.labels, 'bench.example.com/edit': value };
}

export async function runPoolsEdit(opts: BenchOptions): Promise<Section> {
  const load0 = loadavg1();
  const code = codeState();
  const n = opts.quick ? 4 : 12;
  const edits = opts.quick ? 2 : 5;
  const clustersDir = path.join(opts.tmp, 'clusters');
  fs.mkdirSync(clustersDir, { recursive: true });
  const names: string[] = [];
  const regions = new Map<string, string>();
  for (let i = 0; i < n; i++) {
    const raw = pooledCluster(i);
    // Up to every pool of a cluster may roll at once: with the default (1) the edited pool waits for the others'
    // rolls by design (a cluster never loses two pools together), which is not the latency measured here.
    raw.spec.rollout = { ...(raw.spec.rollout as object | undefined), maxConcurrentPools: 4 };
    fs.writeFileSync(path.join(clustersDir, `${raw.metadata.name}.yaml`), stringify(raw));
    names.push(raw.metadata.name);
    regions.set(raw.metadata.name, raw.spec.region as string);
  }
  const world = new World({ clustersDir, account: ACCOUNT });

  // Settled by a real first pass: every stack of every pool created through the fake, every status recorded.
  const settleStart = performance.now();
  const settle = await world.settle();
  const settleMs = performance.now() - settleStart;
  const notApplied = [...settle.values()].filter((o) => o.result !== 'applied');
  if (notApplied.length)
    throw new Error(`settling pass: ${notApplied.length} clusters not applied: ${notApplied[0].message}`);

  // Each edited cluster keeps two stacks in progress (the fake's clock does not move in real time): enough slots.
  const { controller, quiesce } = world.countedController(3 * edits + 1);
  /** Resolves when CreateChangeSet is called for every one of `stacks`, with the time of the last. */
  const changeSets = (stacks: readonly string[], what: string) => {
    const left = new Set(stacks);
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no change set for ${[...left].join(', ')} within 60 s (${what})`)),
        60_000,
      );
      world.onCreateChangeSet = (req) => {
        left.delete(req.stackName);
        if (left.size) return;
        clearTimeout(timer);
        resolve(performance.now());
      };
    });
  };
  const abort = new AbortController();
  const daemon = runDaemon(controller, world.deps, abort.signal, { graceMs: 5000 });
  await sleep(50);
  await quiesce(); // the daemon's first full pass (all unchanged)

  const results: Edit[] = [];
  try {
    for (let i = 0; i < edits; i++) {
      const name = names[(i * 7 + 3) % n];
      const fake = world.fake(regions.get(name) ?? '');
      const rolling = ROLLING.map((p) => poolStackName(name, p));
      // GIVEN the other pools rolling: their labels changed, their stacks updating (in progress on the fake's clock)
      const started = changeSets(rolling, `rolling pools of ${name}`);
      editCluster(clustersDir, name, (raw) => relabel(raw, ROLLING, `roll-${i}`));
      await started;
      await quiesce();
      const before = rolling.map((s) => fake.peek(s)?.status ?? 'none');
      if (!before.every((s) => s.endsWith('_IN_PROGRESS')))
        throw new Error(`pools-edit: the rolling pools of ${name} are not in progress: ${before.join(', ')}`);
      // WHEN the spot pool's labels change
      world.resetCounters();
      const stack = poolStackName(name, EDITED);
      const created = changeSets([stack], `${EDITED} of ${name}`);
      const writtenAt = editCluster(clustersDir, name, (raw) => relabel(raw, [EDITED], `edit-${i}`));
      const createdAt = await created;
      const others = rolling.map((s) => fake.peek(s)?.status ?? 'none');
      await quiesce();
      results.push({ cluster: name, changeSetMs: createdAt - writtenAt, others: others.join(', ') });
      process.stderr.write(
        `  pools-edit: ${EDITED} of ${name}: ${fmt(createdAt - writtenAt)} ms (${others.join(', ')})\n`,
      );
    }
  } finally {
    abort.abort();
    await daemon;
    world.closeStore();
  }

  const lat = summarize(results.map((r) => r.changeSetMs));
  return {
    id: 'pools-edit',
    title: `Node pools: a one-pool edit → its change set while two other pools of the cluster roll (daemon, ${n} settled clusters × 4 pools)`,
    mode: opts.quick ? 'quick' : 'full',
    date: new Date().toISOString(),
    loadavg: [load0, loadavg1()],
    code,
    figures: [
      figure(
        'pools-edit-median',
        `one-pool edit → its change set, other pools rolling, median of ${edits} edits`,
        lat.median,
        'ms',
        { op: '<=', value: 2000 },
      ),
      figure(
        'pools-edit-max',
        `one-pool edit → its change set, other pools rolling, max of ${edits} edits`,
        lat.max,
        'ms',
        { op: '<=', value: 2000 },
      ),
    ],
    tables: [
      table(
        ['cluster', 'change set created ms', 'arm, gpu stacks then'],
        results.map((r) => [r.cluster, fmt(r.changeSetMs), r.others]),
      ),
      table(['', 'min ms', 'median ms', 'max ms'], [['spot pool edit → its change set', ...fmtSummary(lat)]]),
    ],
    notes: [
      `Daemon as shipped (fs.watch on the directory, cdk-nag on, real CDK synthesis of the pool's stack) against the fake CloudFormation; the fleet was settled by a real first pass (${fmt(settleMs / 1000)} s for ${n} clusters, ${4 * n} stacks). Each edit is saved atomically (temp file + rename); times are from the rename.`,
      "Before each measured edit, the labels of the cluster's arm and gpu pools changed and their stacks' change sets were executed: both stacks are UPDATE_IN_PROGRESS (the fake's clock does not move in real time) when the spot pool's change set is created, as the table shows.",
      'The clusters set spec.rollout.maxConcurrentPools: 4. With the default (1) the spot pool waits until the rolls in progress end: by design a cluster never loses two pools at once, so that wait is the policy, not latency.',
    ],
    data: { clusters: n, settleMs, edits: results },
  };
}
