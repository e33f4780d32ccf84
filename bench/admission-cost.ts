/**
 * Admission cost of the WorkerCluster CRD's CEL rules (issue 24 item 5): create and update latency per object on an
 * idle kube-apiserver, with the generated CRD (lib/platform/kube/crd.ts, every CEL rule) and with the same CRD stripped of its
 * x-kubernetes-validations (same structural schema, patterns, bounds and pruning), served side by side under another
 * group so that one API server, one etcd and one moment measure both. Creates and updates alternate between the
 * variants object by object, so a change in the machine's load hits them alike.
 *
 * Each request is measured twice: wall-clock time at the client, and the CPU time the kube-apiserver process spent
 * meanwhile (the sum of its threads' /proc schedstat run times). On a shared machine the wall-clock time swings with the
 * other processes; the API server's CPU time barely does, so it ranks variants and rules where wall-clock cannot.
 *
 * Standalone (not part of `npm run bench`):
 *   npx ts-node --transpile-only bench/admission-cost.ts [objects per example] [--runs R] [--before crd.yaml]
 * prints the Markdown section that bench/RESULTS.md records: R runs (one fresh API server each; default 3), each
 * figure the median over every run's requests, with the per-run medians beside it. `--before FILE` also serves the
 * WorkerCluster CRD of FILE (an older deploy/crd.yaml: `git show <commit>:deploy/crd.yaml > /tmp/before.yaml`) under a
 * third group, so that before and after are measured in the same run.
 *   npx ts-node --transpile-only bench/admission-cost.ts --per-rule [objects] [example] [crd.yaml]
 * times creates of one example (edge-ap1 by default) against CRDs that each hold ONE of the CRD's CEL rules (of the
 * generated CRD, or of the WorkerCluster CRD of crd.yaml): what each rule costs on its own.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { KubeClient } from '../lib/platform/kube/client';
import { KIND, workerClusterCrd } from '../lib/platform/kube/crd';
import { Json } from '../lib/platform/kube/structural';
import { KubeApiServer, startKubeApiServer } from '../test/helpers/kube-apiserver';

const NS = 'bench';
const EXAMPLES = ['prod-eu1', 'staging-us1', 'edge-ap1'];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];

/** The CRD under another group (so that it is served beside the original). */
function regrouped(crd: Json, group: string): Json {
  const copy = structuredClone(crd);
  copy.metadata = { name: `${copy.spec.names.plural}.${group}` };
  copy.spec.group = group;
  return copy;
}

/** Where each CEL rule of a schema is: the keys from the openAPIV3Schema down to its node, and its index there. */
export interface RulePlace {
  readonly keys: string[];
  readonly index: number;
  readonly label: string;
}
export function rulePlaces(node: Json, keys: string[] = [], at = ''): RulePlace[] {
  const here = ((node['x-kubernetes-validations'] ?? []) as Json[]).map((r, index) => ({
    keys,
    index,
    label: `${at || '(object)'}: ${String(r.message ?? r.messageExpression ?? r.rule)
      .replace(/\|/g, '/')
      .slice(0, 80)}`,
  }));
  const below = [
    ...Object.entries((node.properties ?? {}) as Record<string, Json>).flatMap(([k, v]) =>
      rulePlaces(v, [...keys, 'properties', k], `${at}.${k}`.replace(/^\./, '')),
    ),
    ...(node.items ? rulePlaces(node.items, [...keys, 'items'], `${at}[]`) : []),
    ...(node.additionalProperties && typeof node.additionalProperties === 'object'
      ? rulePlaces(node.additionalProperties, [...keys, 'additionalProperties'], `${at}[*]`)
      : []),
  ];
  return [...here, ...below];
}

/** The CRD with only the rules `keep` says (by place), under another group. */
export function withRules(crd: Json, keep: (p: RulePlace) => boolean, group: string): Json {
  const copy = regrouped(crd, group);
  const schema = copy.spec.versions[0].schema.openAPIV3Schema as Json;
  const nodeOf = (keys: string[]) => keys.reduce((n: Json, k) => n[k] as Json, schema);
  const kept = new Map<Json, Json[]>();
  for (const p of rulePlaces(schema)) {
    const node = nodeOf(p.keys);
    if (!kept.has(node)) kept.set(node, []);
    if (keep(p)) kept.get(node)!.push((node['x-kubernetes-validations'] as Json[])[p.index]);
  }
  for (const [node, rules] of kept) {
    if (rules.length) node['x-kubernetes-validations'] = rules;
    else delete node['x-kubernetes-validations'];
  }
  return copy;
}

/** An example as object `name`: its secret's name follows the object's (the CRD refuses another cluster's secret). */
export function objectFor(raw: Json, example: string, name: string, apiVersion: string): Json {
  const values = raw.spec.cloudConfig?.values as Json | undefined;
  const arn = values?.bootstrapTokenSecretArn as string | undefined;
  const spec = arn
    ? {
        ...raw.spec,
        cloudConfig: {
          ...raw.spec.cloudConfig,
          values: {
            ...values,
            bootstrapTokenSecretArn: arn.replace(`worker-stacks/${example}/`, `worker-stacks/${name}/`),
          },
        },
      }
    : raw.spec;
  return { ...raw, apiVersion, metadata: { name, namespace: NS }, spec };
}

/** The WorkerCluster CRD of a file of CRDs (a deploy/crd.yaml). */
function readWorkerClusterCrd(file: string): Json {
  const crd = parseAllDocuments(fs.readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as Json)
    .find((d) => d.spec?.names?.kind === KIND);
  if (!crd) throw new Error(`${file} holds no CustomResourceDefinition of ${KIND}`);
  return crd;
}

const readExample = (example: string) =>
  parse(fs.readFileSync(path.join(__dirname, '..', 'clusters', `${example}.yaml`), 'utf8')) as Json;

/** The kube-apiserver process of `api` (found by its --secure-port). */
function apiServerPid(api: KubeApiServer): number {
  const port = new URL(api.server).port;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (args[0].endsWith('kube-apiserver') && args.includes(`--secure-port=${port}`)) return Number(pid);
    } catch {
      // a process that ended meanwhile
    }
  }
  throw new Error(`no kube-apiserver process with --secure-port=${port}`);
}

/** CPU time (ms) the process's threads have run so far. */
function cpuMs(pid: number): number {
  let ns = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return ns / 1e6;
}

interface Sample {
  wall: number;
  cpu: number;
}
/** A running API server with CRD variants installed, and a timer of one request. */
async function withVariants<T>(
  crds: Json[],
  body: (admin: KubeClient, time: <R>(request: () => Promise<R>) => Promise<[R, Sample]>) => Promise<T>,
): Promise<T> {
  const api = await startKubeApiServer();
  const admin = KubeClient.fromOptions({ kubeconfig: api.kubeconfig });
  try {
    const pid = apiServerPid(api);
    for (const crd of crds) await admin.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    for (const crd of crds) await established(admin, crd.metadata.name);
    await admin.request('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    await new Promise((r) => setTimeout(r, 2000)); // discovery settles
    return await body(admin, async (request) => {
      const [t, c] = [performance.now(), cpuMs(pid)];
      const r = await request();
      return [r, { wall: performance.now() - t, cpu: cpuMs(pid) - c }];
    });
  } finally {
    admin.close();
    await api.stop();
  }
}

export async function established(admin: KubeClient, name: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const { body } = await admin.request<Json>(
      'GET',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
    );
    if (body.status?.conditions?.some((c: Json) => c.type === 'Established' && c.status === 'True')) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} not established`);
}

/**
 * Creates of one example against CRDs that each hold ONE of the CRD's CEL rules (and one with none, one with all),
 * on one API server per batch of rules (a server with 150 CRDs would measure its own size). A rule's cost is its
 * variant's median API-server CPU time minus the no-rule variant's, in the same batch.
 */
async function perRule(n: number, example: string, crdFile?: string, batchSize = 40): Promise<void> {
  const load0 = os.loadavg()[0];
  const cel = crdFile ? readWorkerClusterCrd(crdFile) : workerClusterCrd();
  const version = cel.spec.versions[0].name;
  const raw = readExample(example);
  const places = rulePlaces(cel.spec.versions[0].schema.openAPIV3Schema as Json);
  const rows: { label: string; cpu: number; wall: number }[] = [];
  const baselines: string[] = [];
  for (let b = 0; b < places.length; b += batchSize) {
    const same = (p: RulePlace) => (q: RulePlace) => q.keys.join('/') === p.keys.join('/') && q.index === p.index;
    const variants = [
      { label: '(no rule)', group: 'none.worker-stacks.io', keep: () => false },
      { label: '(every rule)', group: 'all.worker-stacks.io', keep: () => true },
      ...places
        .slice(b, b + batchSize)
        .map((p, i) => ({ label: p.label, group: `r${i}.worker-stacks.io`, keep: same(p) })),
    ].map((v) => ({ ...v, crd: withRules(cel, v.keep, v.group) }));
    const samples = await withVariants(
      variants.map((v) => v.crd),
      async (admin, time) => {
        const out = variants.map(() => [] as Sample[]);
        for (let i = 0; i < n + 2; i++) {
          // Each round starts at another variant: none is always the first request after the previous round.
          for (let j = 0; j < variants.length; j++) {
            const k = (i + j) % variants.length;
            const v = variants[k];
            const [, s] = await time(() =>
              admin.request(
                'POST',
                `/apis/${v.group}/${version}/namespaces/${NS}/workerclusters`,
                objectFor(raw, example, `${example}-${i}`, `${v.group}/${version}`),
              ),
            );
            if (i >= 2) out[k].push(s);
          }
        }
        return out;
      },
    );
    const cpu = samples.map((s) => median(s.map((x) => x.cpu)));
    const wall = samples.map((s) => median(s.map((x) => x.wall)));
    baselines.push(
      `batch ${b / batchSize + 1}: no rule ${cpu[0].toFixed(1)} ms CPU (${wall[0].toFixed(1)} ms wall), every rule ${cpu[1].toFixed(1)} ms CPU (${wall[1].toFixed(1)} ms wall)`,
    );
    variants
      .slice(2)
      .forEach((v, k) => rows.push({ label: v.label, cpu: cpu[k + 2] - cpu[0], wall: wall[k + 2] - wall[0] }));
  }
  rows.sort((a, b) => b.cpu - a.cpu);
  process.stdout.write(
    [
      `Creates of ${example}, ${n} per variant (after 2 discarded), ${places.length} rules in batches of ${batchSize} (one API server each), load average ${load0.toFixed(2)} → ${os.loadavg()[0].toFixed(2)}. ${baselines.join('; ')}. Each rule alone, costliest first (median minus the no-rule median):`,
      '',
      '| rule (schema node: message) | API-server CPU ms | wall ms |',
      '| --- | --- | --- |',
      ...rows.slice(0, 15).map((r) => `| ${r.label} | ${r.cpu.toFixed(2)} | ${r.wall.toFixed(1)} |`),
      '',
      `Sum of all ${rows.length} rules alone: ${rows.reduce((s, r) => s + r.cpu, 0).toFixed(1)} ms CPU.`,
      '',
    ].join('\n'),
  );
}

type Op = 'create' | 'update';
/** Samples by example, variant id and request. */
type RunSamples = Record<string, Record<string, Record<Op, Sample[]>>>;
/** The variants of one run: the CRD, the CRD without CEL, and optionally an older CRD. */
async function run(n: number, variants: { id: string; crd: Json }[]): Promise<RunSamples> {
  const version = variants[0].crd.spec.versions[0].name;
  const collection = (crd: Json) => `/apis/${crd.spec.group}/${version}/namespaces/${NS}/workerclusters`;
  return withVariants(
    variants.map((v) => v.crd),
    async (admin, time) => {
      const out: RunSamples = {};
      for (const example of EXAMPLES) {
        const raw = readExample(example);
        out[example] = Object.fromEntries(variants.map((v) => [v.id, { create: [], update: [] }]));
        const warmup = 5;
        for (let i = 0; i < n + warmup; i++) {
          for (const v of variants) {
            const name = `${example}-${i}`;
            const [{ body: created }, create] = await time(() =>
              admin.request<Json>(
                'POST',
                collection(v.crd),
                objectFor(raw, example, name, `${v.crd.spec.group}/${version}`),
              ),
            );
            // An update that changes the spec (a new generation): every rule runs again, as on a GitOps sync.
            const updated = {
              ...created,
              spec: { ...created.spec, pool: { ...created.spec.pool, maxSize: Number(created.spec.pool.maxSize) + 1 } },
            };
            const [, update] = await time(() => admin.request('PUT', `${collection(v.crd)}/${name}`, updated));
            if (i >= warmup) {
              out[example][v.id].create.push(create);
              out[example][v.id].update.push(update);
            }
          }
        }
      }
      return out;
    },
  );
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  if (process.argv[2] === '--per-rule')
    return perRule(Number(process.argv[3] ?? 10), process.argv[4] ?? 'edge-ap1', process.argv[5]);
  const n = Number(process.argv[2]?.startsWith('--') ? 30 : (process.argv[2] ?? 30));
  const runs = Number(flag('--runs') ?? 3);
  const beforeFile = flag('--before');
  const load0 = os.loadavg()[0];
  const cel = workerClusterCrd();
  const variants = [
    { id: 'cel', crd: cel },
    { id: 'nocel', crd: withRules(cel, () => false, 'nocel.worker-stacks.io') },
    ...(beforeFile
      ? [{ id: 'before', crd: regrouped(readWorkerClusterCrd(beforeFile), 'before.worker-stacks.io') }]
      : []),
  ];
  const results: RunSamples[] = [];
  for (let r = 0; r < runs; r++) results.push(await run(n, variants));
  const load1 = os.loadavg()[0];
  /** The median over every run's samples, and each run's median. */
  const figure = (example: string, id: string, op: Op, of: keyof Sample) => {
    const per = results.map((x) => median(x[example][id][op].map((s) => s[of])));
    const all = results.flatMap((x) => x[example][id][op].map((s) => s[of]));
    return { median: median(all), p90: p90(all), per };
  };
  const cell = (f: { median: number; per: number[] }) =>
    `${f.median.toFixed(1)} (${f.per.map((x) => x.toFixed(1)).join(' / ')})`;
  const rows: string[] = [];
  for (const example of EXAMPLES) {
    for (const op of ['create', 'update'] as const) {
      const wall = (id: string) => figure(example, id, op, 'wall');
      const cpu = (id: string) => figure(example, id, op, 'cpu');
      const cells = [
        example,
        op,
        cell(wall('cel')),
        wall('cel').p90.toFixed(1),
        cell(wall('nocel')),
        (wall('cel').median - wall('nocel').median).toFixed(1),
        cell(cpu('cel')),
        cell(cpu('nocel')),
        (cpu('cel').median - cpu('nocel').median).toFixed(1),
      ];
      if (beforeFile) cells.push(cell(wall('before')), cell(cpu('before')));
      rows.push(`| ${cells.join(' | ')} |`);
    }
  }
  const head = [
    'example',
    'request',
    'with CEL wall median ms (per run)',
    'with CEL wall p90 ms',
    'without CEL wall median ms (per run)',
    'CEL cost, wall ms',
    'with CEL API-server CPU median ms (per run)',
    'without CEL CPU median ms (per run)',
    'CEL cost, CPU ms',
  ];
  if (beforeFile) head.push('before: with CEL wall median ms (per run)', 'before: CPU median ms (per run)');
  process.stdout.write(
    [
      `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${runs} runs (a fresh API server each) × ${n} objects per example and variant (after 5 discarded), load average ${load0.toFixed(2)} → ${load1.toFixed(2)}. Produced by \`npx ts-node --transpile-only bench/admission-cost.ts ${process.argv.slice(2).join(' ')}\`.`,
      '',
      `| ${head.join(' | ')} |`,
      `| ${head.map(() => '---').join(' | ')} |`,
      ...rows,
      '',
    ].join('\n'),
  );
}

if (require.main === module) {
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
