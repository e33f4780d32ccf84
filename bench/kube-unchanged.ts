/**
 * Unchanged pass with the cluster objects as 10,000 WorkerCluster custom resources in a real API server (the etcd
 * and kube-apiserver of scripts/kube/build.sh), against the fake CloudFormation: one paginated list and the watch,
 * then passes served from that cache, with zero writes. Figures beside the file store's (bench/unchanged.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { validateCluster } from '../lib/model/cluster/validate';
import { listTemplates } from '../lib/model/cloudconfig/templates';
import { formatProblem } from '../lib/core/errors';
import { KubeClient } from '../lib/platform/kube/client';
import { collectionPath } from '../lib/platform/kube/resource';
import { installCrd } from '../test/helpers/kube-crd';
import { startKubeApiServer } from '../test/helpers/kube-apiserver';
import { runChild } from './child';
import { generateCluster } from './generate-fleet';
import { BenchOptions, codeState, figure, loadavg1, RESULTS_JSON, RESULTS_MD, Section } from './report';
import { seedStacks, seedStatuses } from './seed';
import { fmt, mb, msSince, now, table } from './stats';
import type { KubePassFigures, KubeUnchangedChildResult } from './kube-unchanged-child';
import { World } from './world';
import { Json } from '../test/helpers/json';
import { defaultTemplates } from '../lib/platform/files/template-directory';

const NS = 'fleet';

/**
 * The bench fleet adapted to the listener rules the generator predates, as bench/review.ts adapts it (node ports
 * outside the NodePort range opted in, UDP listeners with an explicit TCP probe), and validated.
 */
function adaptedFleet(n: number): unknown[] {
  const templates = listTemplates(defaultTemplates());
  return Array.from({ length: n }, (_, i) => {
    const raw = generateCluster(i) as Json;
    for (const l of raw.spec.listeners ?? []) {
      l.hostPort = true;
      if (l.protocol === 'UDP' && l.healthCheck?.port === undefined)
        l.healthCheck = { protocol: 'TCP', port: Number(l.nodePort) + 3000 };
    }
    const result = validateCluster(raw, { file: `workercluster ${NS}/${raw.metadata.name}`, templates });
    if (!result.cluster)
      throw new Error(
        `kube-unchanged bench: cluster ${i} is invalid:\n${result.problems.map(formatProblem).join('\n')}`,
      );
    return raw;
  });
}

/** POSTs every object, `parallel` at a time (a 10,000-object fleet in a minute, not ten). */
async function createAll(client: KubeClient, objects: unknown[], parallel = 32): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < objects.length; i = next++) {
      const o = objects[i] as { metadata: Record<string, unknown> };
      await client.request('POST', collectionPath(NS), { ...o, metadata: { ...o.metadata, namespace: NS } });
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

export async function runKubeUnchanged(opts: BenchOptions): Promise<Section> {
  const load0 = loadavg1();
  const code = codeState();
  const n = opts.quick ? 500 : 10_000;
  const root = path.join(opts.tmp, 'kube-unchanged');
  const clustersDir = path.join(root, 'clusters');
  const api = await startKubeApiServer({
    extraArgs: ['--max-requests-inflight=800', '--max-mutating-requests-inflight=400'],
  });
  try {
    const admin = KubeClient.fromOptions({ kubeconfig: api.kubeconfig });
    await installCrd(admin);
    await admin.request('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    let t = now();
    const objects = adaptedFleet(n);
    const generateMs = msSince(t);
    t = now();
    await createAll(admin, objects);
    const createMs = msSince(t);
    admin.close();
    process.stderr.write(
      `  kube-unchanged: generated ${n} clusters in ${fmt(generateMs / 1000)} s, created them in ${fmt(createMs / 1000)} s\n`,
    );

    // Settle the fleet as bench/unchanged.ts does, through the Kubernetes store (status subresource writes).
    t = now();
    const store = { kind: 'kubernetes' as const, options: { kubeconfig: api.kubeconfig, namespace: NS } };
    const seeding = new World({ clustersDir, account: '111111111111', store });
    const stacks = await seedStatuses(seeding.deps, undefined, 32);
    seedStacks(seeding, stacks);
    seeding.resetCounters();
    const settle = await seeding.controller(32).runPass();
    const settleWrites = seeding.statusWrites;
    seeding.closeStore();
    if ([...settle.outcomes.values()].some((o) => o.result !== 'unchanged'))
      throw new Error('kube-unchanged: the seeded fleet is not settled');
    const seedMs = msSince(t);
    fs.mkdirSync(root, { recursive: true });
    const manifest = path.join(root, 'stacks.json');
    fs.writeFileSync(manifest, JSON.stringify(stacks));
    process.stderr.write(`  kube-unchanged: seeded in ${fmt(seedMs / 1000)} s\n`);

    const r = runChild<KubeUnchangedChildResult>('kube-unchanged-child.ts', [api.kubeconfig, NS, manifest], {
      profileDir: opts.profileDir,
    });
    const [cold, warm] = r.passes;
    const writes = (p: KubePassFigures) =>
      p.cfnWrites +
      p.s3Publishes +
      p.statusWrites +
      Object.entries(p.requests)
        .filter(([m]) => m !== 'GET')
        .reduce((s, [, v]) => s + v, 0);
    const file = fileStoreFigures(n);
    const label = `${n.toLocaleString('en-US')} custom resources`;
    const req = (x: Record<string, number>) =>
      Object.entries(x)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none';
    const row = (name: string, p: KubePassFigures) => [
      name,
      fmt(p.wallMs / 1000),
      fmt(p.clusters / (p.wallMs / 1000)),
      Object.entries(p.outcomes)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
      String(p.syntheses),
      req(p.requests),
      String(p.statusWrites),
      String(p.cfnWrites + p.s3Publishes),
    ];
    return {
      id: 'kube-unchanged',
      title: `Unchanged pass: ${label} (Kubernetes store, real API server), fake CloudFormation`,
      mode: opts.quick ? 'quick' : 'full',
      date: new Date().toISOString(),
      loadavg: [load0, loadavg1()],
      code,
      figures: [
        figure(
          'kube-unchanged-sync',
          `Kubernetes store, ${label}: first list until the cache is synced`,
          r.syncMs / 1000,
          's',
        ),
        figure(
          'kube-unchanged-wall-cold',
          `unchanged pass, ${label}, first pass of a process`,
          cold.wallMs / 1000,
          's',
          { op: '<=', value: 5 },
        ),
        figure('kube-unchanged-wall-second', `unchanged pass, ${label}, second pass`, warm.wallMs / 1000, 's', {
          op: '<=',
          value: 5,
        }),
        figure(
          'kube-unchanged-lists',
          `Kubernetes store, ${label}: lists (all pages of one) for sync and both passes`,
          r.informer.lists,
          '',
          { op: '==', value: 1 },
        ),
        figure(
          'kube-unchanged-writes',
          `unchanged passes, ${label}: writes (API server, CloudFormation, S3)`,
          writes(cold) + writes(warm),
          '',
          { op: '==', value: 0 },
        ),
        figure(
          'kube-unchanged-rss',
          `Kubernetes store, ${label}: peak RSS of the reconciler process`,
          mb(r.maxRssBytes),
          'MB',
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
            'API requests in the pass',
            'status writes',
            'CFN + S3 writes',
          ],
          [row('first (cold process)', cold), row('second', warm)],
        ),
        table(
          ['store', 'objects', 'read before the first pass', 'first pass s', 'second pass s', 'peak RSS MB'],
          [
            [
              'Kubernetes (this run)',
              n.toLocaleString('en-US'),
              `${fmt(r.syncMs / 1000)} s: ${req(r.syncRequests)} (list pages + the watch)`,
              fmt(cold.wallMs / 1000),
              fmt(warm.wallMs / 1000),
              fmt(mb(r.maxRssBytes)),
            ],
            file
              ? [
                  `file (bench/unchanged.ts, as ${file.from} records it)`,
                  file.clusters.toLocaleString('en-US'),
                  'none (every pass reads every file)',
                  fmt(file.cold),
                  fmt(file.second),
                  fmt(file.rssMb),
                ]
              : ['file', '-', 'run `npm run bench -- unchanged` for its figures', '-', '-', '-'],
          ],
        ),
      ],
      notes: [
        `Setup (not timed): generating ${label} took ${fmt(generateMs / 1000)} s; creating them (POST, 32 in parallel) ${fmt(createMs / 1000)} s; seeding ${fmt(seedMs / 1000)} s (status of an applied cluster through KubernetesStore.writeStatus, a PUT of the status subresource each, 32 at a time, then one real pass with 32 workers: ${settleWrites} more status writes, of fields the seed does not set).`,
        "The measured process starts the store's watch as the daemon does: one paginated list (500 objects a page) fills the cache, the watch keeps it; both passes read the cache (no request per cluster) and the API server gets no write.",
        `API server: kube-apiserver v1.37.2 and etcd built by scripts/kube/build.sh, on this machine, sharing its 2 cores with the reconciler.`,
      ],
      data: { clusters: n, generateMs, createMs, seedMs, settleWrites, ...r },
    };
  } finally {
    await api.stop();
  }
}

/** The file store's unchanged figures: the last run in bench/results.json, else those RESULTS.md records. */
function fileStoreFigures(
  n: number,
): { clusters: number; cold: number; second: number; rssMb: number; from: string } | undefined {
  try {
    const results = JSON.parse(fs.readFileSync(RESULTS_JSON, 'utf8')) as {
      sections: Partial<Record<string, { data?: Json }>>;
    };
    const data = results.sections.unchanged?.data;
    if (data?.passes) {
      const [cold, second] = data.passes as { wallMs: number }[];
      return {
        clusters: data.clusters ?? n,
        cold: cold.wallMs / 1000,
        second: second.wallMs / 1000,
        rssMb: mb(data.maxRssBytes),
        from: 'bench/results.json',
      };
    }
  } catch {
    // no results.json: RESULTS.md below
  }
  const md = fs.existsSync(RESULTS_MD) ? fs.readFileSync(RESULTS_MD, 'utf8') : '';
  const cold = /unchanged pass, ([\d,]+) clusters, first pass of a process \| ([\d.]+) s/.exec(md);
  const second = /unchanged pass, [\d,]+ clusters, second pass \| ([\d.]+) s/.exec(md);
  const rss = /measured passes run in a fresh process \(peak RSS ([\d.]+) MB\)/.exec(md);
  if (!cold || !second || !rss) return undefined;
  return {
    clusters: Number(cold[1].replace(/,/g, '')),
    cold: Number(cold[2]),
    second: Number(second[1]),
    rssMb: Number(rss[1]),
    from: 'bench/RESULTS.md',
  };
}
