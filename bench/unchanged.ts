/**
 * Unchanged pass: 10,000 clusters whose recorded status already matches what
 * is live, against the fake CloudFormation. The fleet is seeded here (status
 * through the store, checksums and fingerprints as the reconciler computes
 * them, then one real pass), without 10,000 syntheses; the measured passes run
 * in a fresh child process (bench/unchanged-child.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { allTasks } from '../lib/engines/reconciler/compose/workflow';
import { runChild } from './child';
import { writeFleet } from './generate-fleet';
import { BenchOptions, codeState, figure, loadavg1, Section } from './report';
import { seedStacks, seedStatuses } from './seed';
import { fmt, mb, msSince, now, table } from './stats';
import type { PassFigures, UnchangedChildResult } from './unchanged-child';
import { STACKS_PER_PAGE, World } from './world';

export async function runUnchanged(opts: BenchOptions): Promise<Section> {
  const load0 = loadavg1();
  const code = codeState();
  const n = opts.quick ? 500 : 10_000;
  const root = path.join(opts.tmp, 'unchanged');
  const clustersDir = path.join(root, 'clusters');
  let t = now();
  writeFleet(clustersDir, n);
  const generateMs = msSince(t);
  t = now();
  const seeding = new World({ clustersDir, account: '111111111111' });
  const stacks = await seedStatuses(seeding.deps);
  seedStacks(seeding, stacks);
  // One real pass of the current reconciler over the seeded fleet (unchanged: no synthesis) lets it record whatever
  // else it keeps once a cluster is settled, so the measured passes start from exactly the state it writes itself.
  seeding.resetCounters();
  const settle = await seeding.controller().runPass();
  const settleWrites = seeding.statusWrites;
  if (seeding.syntheses || [...settle.outcomes.values()].some((o) => o.result !== 'unchanged'))
    throw new Error('unchanged: the seeded fleet is not settled');
  const seedMs = msSince(t);
  const manifest = path.join(root, 'stacks.json');
  fs.writeFileSync(manifest, JSON.stringify(stacks));
  process.stderr.write(
    `  unchanged: generated ${n} clusters in ${fmt(generateMs / 1000)} s, seeded in ${fmt(seedMs / 1000)} s\n`,
  );

  const r = runChild<UnchangedChildResult>('unchanged-child.ts', [clustersDir, manifest], {
    profileDir: opts.profileDir,
  });
  const [cold, warm] = r.passes;
  // Each account's stacks are listed with its own credentials: one paginated listing per account and region.
  const perRegion = new Map<string, number>();
  for (const st of stacks)
    perRegion.set(`${st.account}/${st.region}`, (perRegion.get(`${st.account}/${st.region}`) ?? 0) + 1);
  const regions = perRegion.size;
  // The fewest reads any reconciler can make with 100-stack pages: one paginated listing per account and region.
  const floor = [...perRegion.values()].reduce((n, k) => n + Math.ceil(k / STACKS_PER_PAGE), 0);
  const split = [...perRegion]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([r, k]) => `${r} ${k.toLocaleString('en-US')}`)
    .join(', ');
  const writes = (p: PassFigures) => p.cfnWrites + p.s3Publishes + p.statusWrites + p.stateFilesTouched;
  const row = (label: string, p: PassFigures) => [
    label,
    fmt(p.wallMs / 1000),
    fmt(p.clusters / (p.wallMs / 1000)),
    Object.entries(p.outcomes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', '),
    String(p.syntheses),
    `${p.cfnReads} (${p.listPages} pages of ${p.cfnCalls.listStacks ?? 0} listings)`,
    String(p.cfnWrites),
    String(p.s3Publishes),
    String(p.statusWrites),
    String(p.stateFilesTouched),
  ];
  const tasks = allTasks()
    .map((x) => x.name)
    .filter((k) => cold.taskMs[k] || warm.taskMs[k]);
  const breakdown = (label: string, p: PassFigures) => [
    label,
    fmt(p.storeListMs),
    ...tasks.map((k) => fmt(p.taskMs[k] ?? 0)),
  ];
  process.stderr.write(`  unchanged: cold ${fmt(cold.wallMs / 1000)} s, second ${fmt(warm.wallMs / 1000)} s\n`);

  const label = `${n.toLocaleString('en-US')} clusters`;
  return {
    id: 'unchanged',
    title: `Unchanged pass: ${label}, fake CloudFormation`,
    mode: opts.quick ? 'quick' : 'full',
    date: new Date().toISOString(),
    loadavg: [load0, loadavg1()],
    code,
    figures: [
      figure('unchanged-wall-cold', `unchanged pass, ${label}, first pass of a process`, cold.wallMs / 1000, 's', {
        op: '<=',
        value: 5,
      }),
      figure('unchanged-wall-second', `unchanged pass, ${label}, second pass`, warm.wallMs / 1000, 's', {
        op: '<=',
        value: 5,
      }),
      figure('unchanged-syntheses', `unchanged pass, ${label}, syntheses`, cold.syntheses + warm.syntheses, '', {
        op: '==',
        value: 0,
      }),
      figure(
        'unchanged-writes',
        `unchanged pass, ${label}, writes (CloudFormation, S3, status, state files)`,
        writes(cold) + writes(warm),
        '',
        { op: '==', value: 0 },
      ),
      figure(
        'unchanged-cfn-reads',
        `unchanged pass, ${label}, CloudFormation read calls (per pass)`,
        Math.max(cold.cfnReads, warm.cfnReads),
        '',
        { op: '<=', value: 100 },
      ),
      figure(
        'unchanged-cfn-reads-floor',
        `unchanged pass, ${label}, fewest read calls possible with ${STACKS_PER_PAGE}-stack pages (Σ ceil per account and region)`,
        floor,
        '',
      ),
    ],
    tables: [
      table(
        [
          'pass',
          'wall s',
          'clusters/s',
          'outcomes',
          'syntheses',
          'CFN read calls',
          'CFN writes',
          'S3 publishes',
          'status writes',
          'state files touched',
        ],
        [row('first (cold process)', cold), row('second', warm)],
      ),
      table(
        ['pass', 'store.list ms', ...tasks.map((k) => `${k} ms`)],
        [breakdown('first', cold), breakdown('second', warm)],
      ),
    ],
    notes: [
      `Setup (not timed): generating ${label} took ${fmt(generateMs / 1000)} s; seeding ${fmt(seedMs / 1000)} s: the status of an applied cluster written through FileStore.writeStatus (validate, render, fingerprint each), then one real unchanged pass of the reconciler (it wrote ${settleWrites} statuses, fields the seed does not set). The measured passes run in a fresh process (peak RSS ${fmt(mb(r.maxRssBytes))} MB), controller concurrency 4 (the default), pino formatting every line to /dev/null.`,
      `The fake CloudFormation returns every stack from one listStacks call; real DescribeStacks pages hold ${STACKS_PER_PAGE} stacks, so read calls count ceil(stacks/${STACKS_PER_PAGE}) pages per listing (${regions} accounts and regions, one listing each, with that account's credentials). Stacks per account and region: ${split}; so no reconciler can list them in fewer than ${floor} pages, and ≤ 100 read calls for ${label} holds only when the stacks fill the pages.`,
      'Task times are the summed synchronous time of each workflow task over all clusters (bench/world.ts timeTasks); store.list is FileStore.list (read and parse every YAML and state file, hash every spec).',
      'Seeded stacks are CREATE_COMPLETE with a stub template whose only content is the ConfigChecksum output; an unchanged pass reads nothing else of them.',
    ],
    data: { clusters: n, generateMs, seedMs, settleWrites, ...r },
  };
}
