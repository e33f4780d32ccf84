/**
 * Change latency: the daemon (runDaemon + Controller) watches a file-store
 * directory of settled clusters; one object file changes; how long until
 * CreateChangeSet is called for that cluster's stack.
 */
import * as path from 'node:path';
import { runDaemon } from '../lib/engines/reconciler/runtime/daemon';
import { workerStackName } from '../lib/core/naming';
import { CHANGES, editCluster } from './edit';
import { writeFleet } from './generate-fleet';
import { BenchOptions, codeState, figure, loadavg1, Section } from './report';
import { fmt, fmtSummary, sleep, summarize, table } from './stats';
import { World } from './world';

const ACCOUNT = '111111111111';

interface Edit {
  readonly cluster: string;
  readonly change: string;
  /** From the rename to: */
  readonly watchEventMs: number;
  readonly reconcileStartMs: number;
  readonly changeSetMs: number;
  /** Inside the pass: */
  readonly storeListMs: number;
  readonly synthMs: number;
}

export async function runLatency(opts: BenchOptions): Promise<Section> {
  const load0 = loadavg1();
  const code = codeState();
  const n = opts.quick ? 20 : 100;
  const edits = opts.quick ? 3 : 5;
  const clustersDir = path.join(opts.tmp, 'clusters');
  const names = writeFleet(clustersDir, n, { accounts: [ACCOUNT] });
  const world = new World({ clustersDir, account: ACCOUNT });

  // Settled by a real first pass: every stack created through the fake, every status recorded by the reconciler.
  const settleStart = performance.now();
  const settle = await world.settle();
  const settleMs = performance.now() - settleStart;
  const notApplied = [...settle.values()].filter((o) => o.result !== 'applied');
  if (notApplied.length)
    throw new Error(`settling pass: ${notApplied.length} clusters not applied: ${notApplied[0].message}`);

  // The fake's clock does not move in real time, so each edit's stack stays in progress and holds a --concurrency
  // slot: enough slots that no edit waits for one (that wait is the concurrency's, measured by rollout).
  const { controller, quiesce } = world.countedController(edits + 1);
  const abort = new AbortController();
  const daemon = runDaemon(controller, world.deps, abort.signal, { graceMs: 5000 });
  await sleep(50);
  await quiesce(); // the daemon's first full pass (all unchanged)

  const results: Edit[] = [];
  try {
    for (let i = 0; i < edits; i++) {
      const name = names[(i * 37 + 11) % n];
      const change = CHANGES[i % CHANGES.length];
      const stack = workerStackName(name);
      world.resetCounters();
      let watchAt: number | undefined;
      world.onWatchEvent = (changed) =>
        changed === name && watchAt === undefined ? (watchAt = performance.now()) : undefined;
      const created = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no change set for ${stack} within 60 s (${change.label})`)),
          60_000,
        );
        world.onCreateChangeSet = (req) => {
          if (req.stackName !== stack) return;
          clearTimeout(timer);
          resolve(performance.now());
        };
      });
      const writtenAt = editCluster(clustersDir, name, (raw) => change.apply(raw, i));
      const createdAt = await created;
      await quiesce();
      const outcome = world.spans.get(name);
      results.push({
        cluster: name,
        change: change.label,
        watchEventMs: (watchAt ?? NaN) - writtenAt,
        reconcileStartMs: (outcome?.start ?? NaN) - writtenAt,
        changeSetMs: createdAt - writtenAt,
        storeListMs: world.storeListMs,
        synthMs: world.taskMs.get('synthesize') ?? NaN,
      });
      process.stderr.write(`  latency: ${change.label} on ${name}: ${fmt(createdAt - writtenAt)} ms\n`);
    }
  } finally {
    abort.abort();
    await daemon;
  }

  const lat = summarize(results.map((r) => r.changeSetMs));
  return {
    id: 'latency',
    title: `Change latency: object file saved → CreateChangeSet (daemon, ${n} settled clusters)`,
    mode: opts.quick ? 'quick' : 'full',
    date: new Date().toISOString(),
    loadavg: [load0, loadavg1()],
    code,
    figures: [
      figure(
        'latency-median',
        `object change → change set created, median of ${edits} edits (${n} clusters)`,
        lat.median,
        'ms',
        { op: '<=', value: 2000 },
      ),
      figure(
        'latency-max',
        `object change → change set created, max of ${edits} edits (${n} clusters)`,
        lat.max,
        'ms',
        { op: '<=', value: 2000 },
      ),
    ],
    tables: [
      table(
        [
          'cluster',
          'change',
          'watch event ms',
          'reconcile starts ms',
          'change set created ms',
          'store.list in the pass ms',
          'synth ms',
        ],
        results.map((r) => [
          r.cluster,
          r.change,
          fmt(r.watchEventMs),
          fmt(r.reconcileStartMs),
          fmt(r.changeSetMs),
          fmt(r.storeListMs),
          fmt(r.synthMs),
        ]),
      ),
      table(['', 'min ms', 'median ms', 'max ms'], [['object change → change set created', ...fmtSummary(lat)]]),
    ],
    notes: [
      `Daemon as shipped (lib/engines/reconciler/runtime/daemon.ts, fs.watch on the directory, Controller concurrency ${edits + 1} (each edit's stack stays in progress on the fake's clock and holds a slot), cdk-nag on) against the fake CloudFormation; the fleet was settled by a real first pass (${fmt(settleMs / 1000)} s for ${n} clusters).`,
      'Each edit is saved atomically (temp file + rename). Times are from the rename; "reconcile starts" is the first workflow hook of that cluster, after the pass has listed (read and parsed) every object in the directory.',
    ],
    data: { clusters: n, settleMs, edits: results },
  };
}
