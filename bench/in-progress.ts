/**
 * A fleet with stacks in progress (issue 11): 1,000 settled clusters, 100 of them rolling for 5-20 (simulated)
 * minutes, against the fake CloudFormation, reconciled as the daemon does (requeue, never wait). Measured:
 * - CloudFormation read calls per poll against the floor Σ ceil(stacks in progress per region / 100), plus one
 *   describe per stack whose operation ended in that poll;
 * - edit → CreateChangeSet of another cluster while the 100 roll (real time: its reconcile does not queue behind them);
 * - record latency: simulated time from a stack's end to its checksum being recorded (≤ one poll).
 */
import * as path from 'node:path';
import { TASK } from '../lib/engines/reconciler/workflow/context';
import { Controller } from '../lib/engines/reconciler/runtime/controller';
import { after } from '../lib/engines/reconciler/workflow/task';
import { workerStackName } from '../lib/core/naming';
import { complete } from '../test/fakes/fake-cloudformation';
import { CHANGES, editCluster } from './edit';
import { Rng, writeFleet } from './generate-fleet';
import { BenchOptions, codeState, figure, loadavg1, Section } from './report';
import { seedStacks, seedStatuses } from './seed';
import { fmt, fmtSummary, summarize, table } from './stats';
import { STACKS_PER_PAGE, World } from './world';

const ACCOUNT = '111111111111';
const POLL_MS = 5000;
const MAX_PODS = CHANGES.find((c) => c.label.startsWith('maxPods'))!;

interface Poll {
  readonly at: number;
  readonly reads: number;
  readonly floor: number;
  readonly inProgress: number;
}

export async function runInProgress(opts: BenchOptions): Promise<Section> {
  const load0 = loadavg1();
  const code = codeState();
  const n = opts.quick ? 200 : 1000;
  const k = opts.quick ? 20 : 100;
  const clustersDir = path.join(opts.tmp, 'clusters');
  const names = writeFleet(clustersDir, n, { accounts: [ACCOUNT] });
  const world = new World({ clustersDir, account: ACCOUNT });
  const stacks = await seedStatuses(world.deps);
  seedStacks(world, stacks);
  const regionOf = new Map(stacks.map((s) => [s.name, s.region]));

  // k clusters get a new node config; each of their stacks then takes 5-20 minutes (60-240 polls of 5 s).
  const rng = new Rng(11);
  const rolling = names.filter((_, i) => i % Math.floor(n / k) === 0).slice(0, k);
  const pollsOf = new Map<string, number>();
  for (const name of rolling) {
    editCluster(clustersDir, name, (raw) => MAX_PODS.apply(raw, 1));
    pollsOf.set(workerStackName(name), rng.int(60, 240));
    world.fake(regionOf.get(name)!).setDefault(workerStackName(name), complete(pollsOf.get(workerStackName(name))));
  }

  // Each stack's end (simulated) and the time its new checksum was recorded.
  const endsAt = new Map<string, number>();
  const recordedAt = new Map<string, number>();
  for (const f of world.fakes.values()) {
    const execute = f.executeChangeSet.bind(f);
    f.executeChangeSet = async (stack, cs, token) => {
      await execute(stack, cs, token);
      endsAt.set(stack, world.clock.ms + (pollsOf.get(stack) ?? 1) * POLL_MS);
    };
  }
  const hooks = [
    after(TASK.recordExecution, (ctx) => void recordedAt.set(workerStackName(ctx.record.name), world.clock.ms)),
  ];
  const controller = new Controller(
    { ...world.deps, pollMs: POLL_MS, now: world.clock.now },
    { concurrency: k + 10, workers: 4, hooks },
  );

  // The first pass: a full listing per region, k syntheses and change sets.
  world.resetCounters();
  const t0 = performance.now();
  const first = await controller.runPass();
  const firstPassMs = performance.now() - t0;
  const started = [...first.outcomes.values()].filter((o) => o.result === 'waiting').length;
  if (started !== k) throw new Error(`in-progress: ${started} of ${k} rolls started in the first pass`);
  const firstPassReads = world.cfnReads();

  // While they roll: another cluster's edit, reconciled as the work queue would (the watch event's own delay is the
  // latency benchmark's): real time from the save to its CreateChangeSet.
  const editLatencyMs: number[] = [];
  for (const [i, name] of names
    .filter((x) => !rolling.includes(x))
    .slice(0, opts.quick ? 3 : 10)
    .entries()) {
    let createdAt: number | undefined;
    world.onCreateChangeSet = () => (createdAt ??= performance.now());
    const savedAt = editCluster(clustersDir, name, (raw) => MAX_PODS.apply(raw, 100 + i));
    await controller.reconcileKey(name);
    if (createdAt === undefined) throw new Error(`in-progress: the edit of ${name} made no change set`);
    editLatencyMs.push(createdAt - savedAt);
  }
  world.onCreateChangeSet = undefined;
  const editedToo = new Set(names.filter((x) => !rolling.includes(x)).slice(0, opts.quick ? 3 : 10));

  // Then the polls, as `reconcile --once` makes them (the daemon's requeues are the same requeues). A stack is in
  // progress at time t while t < its end (the fake ends an operation at the first call after its end).
  const rolled = new Set([...rolling, ...editedToo]);
  const stackRegion = new Map([...rolled].map((nm) => [workerStackName(nm), regionOf.get(nm)!]));
  // Per region that had a stack in progress at the last poll: at least one page (an empty page is how one learns that
  // nothing is in progress any more), one per 100 stacks in progress; and a describe per stack that ended.
  const floorAt = (t: number, since: number) => {
    const per = new Map<string, number>();
    let ended = 0;
    for (const [stack, end] of endsAt) {
      if (end <= since) continue;
      const region = stackRegion.get(stack)!;
      per.set(region, (per.get(region) ?? 0) + (end > t ? 1 : 0));
      if (end <= t) ended++;
    }
    const pages = [...per.values()].reduce((sum, c) => sum + Math.max(1, Math.ceil(c / STACKS_PER_PAGE)), 0);
    return { floor: pages + ended, inProgress: [...per.values()].reduce((a, b) => a + b, 0) };
  };
  const polls: Poll[] = [];
  let last = world.cfnReads();
  let pending: { at: number; floor: number; inProgress: number } | undefined;
  const closePoll = () => {
    const reads = world.cfnReads();
    if (pending) polls.push({ ...pending, reads: reads - last });
    last = reads;
  };
  const outcomes = await controller.runUntilSettled({
    names: rolled,
    deadlineMs: 2 * 3600_000,
    now: () => world.clock.ms,
    sleep: async (ms) => {
      closePoll();
      const since = world.clock.ms;
      world.clock.advance(ms);
      pending = { at: world.clock.ms, ...floorAt(world.clock.ms, since) };
    },
  });
  closePoll();
  const applied = [...outcomes.values()].filter((o) => o.result === 'applied').length;
  if (applied !== rolled.size) throw new Error(`in-progress: ${applied} of ${rolled.size} rolls recorded`);

  const recordLag = [...endsAt].map(([stack, end]) => (recordedAt.get(stack) ?? NaN) - end);
  const over = polls.filter((p) => p.reads > p.floor);
  const readsPerPoll = summarize(polls.map((p) => p.reads));
  const floors = summarize(polls.map((p) => p.floor));
  const editSummary = summarize(editLatencyMs);
  const lagSummary = summarize(recordLag);
  return {
    id: 'in-progress',
    title: `Stacks in progress: ${n.toLocaleString('en-US')} clusters, ${k} rolling for 5-20 minutes, fake CloudFormation`,
    mode: opts.quick ? 'quick' : 'full',
    date: new Date().toISOString(),
    loadavg: [load0, loadavg1()],
    code,
    figures: [
      figure(
        'in-progress-reads-over-floor',
        'polls with more CloudFormation reads than Σ max(1, ceil(in progress / 100)) + ended',
        over.length,
        'polls',
        { op: '==', value: 0 },
      ),
      figure(
        'in-progress-edit-latency',
        `edit → CreateChangeSet with ${k} stacks in progress, max`,
        editSummary.max / 1000,
        's',
        { op: '<=', value: 2 },
      ),
      figure(
        'in-progress-record-latency',
        'stack end → checksum recorded, max (simulated)',
        lagSummary.max / 1000,
        's',
        { op: '<=', value: POLL_MS / 1000 },
      ),
    ],
    tables: [
      table(
        ['', 'polls', 'min', 'median', 'max'],
        [
          ['CloudFormation reads per poll', String(polls.length), ...fmtSummary(readsPerPoll)],
          [
            'floor: Σ max(1, ceil(in progress per region / 100)) + stacks ended',
            String(polls.length),
            ...fmtSummary(floors),
          ],
        ],
      ),
      table(
        ['', 'n', 'min', 'median', 'max'],
        [
          ['edit → CreateChangeSet, ms (real)', String(editSummary.n), ...fmtSummary(editSummary)],
          [
            'stack end → recorded, s (simulated)',
            String(lagSummary.n),
            ...fmtSummary(summarize(recordLag.map((x) => x / 1000))),
          ],
        ],
      ),
    ],
    notes: [
      `${n} clusters over ${new Set(stacks.map((s) => s.region)).size} regions, seeded settled (bench/seed.ts); ${k} of them edited (maxPods: new config, so their stacks roll), each stack's operation lasting 60-240 polls of ${POLL_MS / 1000} s; --concurrency ${k + 10}, 4 workers.`,
      `First pass: ${fmt(firstPassMs / 1000)} s real (${k} syntheses with cdk-nag), ${firstPassReads} read calls (full DescribeStacks listings at ${STACKS_PER_PAGE} stacks a page).`,
      `Then ${polls.length} polls until all ${rolled.size} were recorded: reads per poll are ListStacks pages filtered to stacks in progress (${STACKS_PER_PAGE} a page) plus one DescribeStacks of each stack whose operation ended; ${over.length} polls went over that floor.`,
      `While they rolled, ${editSummary.n} other clusters were edited one at a time and reconciled as the work queue does: none waited behind a stack in progress. The watch's own delay (fs.watch and the file store's 100 ms settle) is in the change-latency benchmark.`,
    ],
    data: { clusters: n, rolling: k, polls, editLatencyMs, recordLag, firstPassMs, firstPassReads },
  };
}
