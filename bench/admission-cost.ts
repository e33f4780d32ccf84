/**
 * Admission cost of the WorkerCluster CRD's CEL rules (issue 24 item 5): create and update latency per object on an
 * idle kube-apiserver, with the generated CRD (lib/kube/crd.ts, every CEL rule) and with the same CRD stripped of its
 * x-kubernetes-validations (same structural schema, patterns, bounds and pruning), served side by side under another
 * group so that one API server, one etcd and one moment measure both. Creates and updates alternate between the two
 * CRDs object by object, so a change in the machine's load hits both alike.
 *
 * Standalone (not part of `npm run bench`): npx ts-node --transpile-only bench/admission-cost.ts [objects per example]
 * prints the Markdown section that bench/RESULTS.md records. `--per-rule [objects]` instead times creates of edge-ap1
 * (the costliest example) with one rule of the object's top levels (spec, spec.listeners, spec.securityGroupRules)
 * left out at a time: what each of those rules costs.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { KubeClient } from '../lib/kube/client';
import { workerClusterCrd } from '../lib/kube/crd';
import { startKubeApiServer } from '../test/helpers/kube-apiserver';

type Json = Record<string, any>;
const NS = 'bench';
const EXAMPLES = ['prod-eu1', 'staging-us1', 'edge-ap1'];
const NOCEL_GROUP = 'nocel.worker-stacks.io';

/** The CRD without any CEL rule, under another group. */
function withoutCel(crd: Json): Json {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (node && typeof node === 'object') {
      return Object.fromEntries(Object.entries(node).filter(([k]) => k !== 'x-kubernetes-validations').map(([k, v]) => [k, strip(v)]));
    }
    return node;
  };
  const copy = strip(crd) as Json;
  copy.metadata = { name: `${copy.spec.names.plural}.${NOCEL_GROUP}` };
  copy.spec.group = NOCEL_GROUP;
  return copy;
}

export async function established(admin: KubeClient, name: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const { body } = await admin.request<Json>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    if (body.status?.conditions?.some((c: Json) => c.type === 'Established' && c.status === 'True')) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} not established`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];

/** Where each CEL rule of a schema is: the keys from the openAPIV3Schema down to its node, and its index there. */
interface RulePlace {
  readonly keys: string[];
  readonly index: number;
  readonly label: string;
}
export function rulePlaces(node: Json, keys: string[] = [], at = ''): RulePlace[] {
  const here = ((node['x-kubernetes-validations'] ?? []) as Json[]).map((r, index) => ({ keys, index, label: `${at || '(object)'}: ${String(r.message ?? r.messageExpression ?? r.rule).replace(/\|/g, '/').slice(0, 80)}` }));
  const below = [
    ...Object.entries((node.properties ?? {}) as Record<string, Json>).flatMap(([k, v]) => rulePlaces(v, [...keys, 'properties', k], `${at}.${k}`.replace(/^\./, ''))),
    ...(node.items ? rulePlaces(node.items, [...keys, 'items'], `${at}[]`) : []),
    ...(node.additionalProperties && typeof node.additionalProperties === 'object' ? rulePlaces(node.additionalProperties, [...keys, 'additionalProperties'], `${at}[*]`) : []),
  ];
  return [...here, ...below];
}

/** The CRD with only the rules `keep` says (by place), under another group. */
export function withRules(crd: Json, keep: (p: RulePlace) => boolean, group: string): Json {
  const copy = structuredClone(crd);
  const schema = copy.spec.versions[0].schema.openAPIV3Schema as Json;
  const places = rulePlaces(schema);
  const nodeOf = (keys: string[]) => keys.reduce((n: Json, k) => n[k] as Json, schema);
  const kept = new Map<Json, Json[]>();
  for (const p of places) {
    const node = nodeOf(p.keys);
    if (!kept.has(node)) kept.set(node, []);
    if (keep(p)) kept.get(node)!.push((node['x-kubernetes-validations'] as Json[])[p.index]);
  }
  for (const [node, rules] of kept) {
    if (rules.length) node['x-kubernetes-validations'] = rules;
    else delete node['x-kubernetes-validations'];
  }
  copy.metadata = { name: `${copy.spec.names.plural}.${group}` };
  copy.spec.group = group;
  return copy;
}

/** An example as object `name`: its secret's name follows the object's (the CRD refuses another cluster's secret). */
export function objectFor(raw: Json, example: string, name: string, apiVersion: string): Json {
  const values = raw.spec.cloudConfig?.values as Json | undefined;
  const arn = values?.bootstrapTokenSecretArn as string | undefined;
  const spec = arn ? { ...raw.spec, cloudConfig: { ...raw.spec.cloudConfig, values: { ...values, bootstrapTokenSecretArn: arn.replace(`worker-stacks/${example}/`, `worker-stacks/${name}/`) } } } : raw.spec;
  return { ...raw, apiVersion, metadata: { name, namespace: NS }, spec };
}

/**
 * Creates of one example against CRDs that each hold ONE of the CRD's CEL rules (and one with none, one with all),
 * on one API server per batch of rules (a server with 150 CRDs would measure its own size). A rule's cost is its
 * variant's median minus the no-CEL variant's, in the same batch.
 */
async function perRule(n: number, example: string, batchSize = 40): Promise<void> {
  const load0 = os.loadavg()[0];
  const cel = workerClusterCrd() as Json;
  const version = cel.spec.versions[0].name;
  const raw = parse(fs.readFileSync(path.join(__dirname, '..', 'clusters', `${example}.yaml`), 'utf8')) as Json;
  const places = rulePlaces(cel.spec.versions[0].schema.openAPIV3Schema as Json);
  const rows: { label: string; cost: number }[] = [];
  const baselines: string[] = [];
  for (let b = 0; b < places.length; b += batchSize) {
    const batch = places.slice(b, b + batchSize);
    const variants = [
      { label: '(no rule)', group: 'none.worker-stacks.io', keep: () => false },
      { label: '(every rule)', group: 'all.worker-stacks.io', keep: () => true },
      ...batch.map((p, i) => ({ label: p.label, group: `r${i}.worker-stacks.io`, keep: (q: RulePlace) => q.keys.join('/') === p.keys.join('/') && q.index === p.index })),
    ].map((v) => ({ ...v, crd: withRules(cel, v.keep, v.group) }));
    const api = await startKubeApiServer();
    const admin = KubeClient.fromOptions({ kubeconfig: api.kubeconfig });
    try {
      for (const v of variants) await admin.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', v.crd);
      for (const v of variants) await established(admin, v.crd.metadata.name);
      await admin.request('POST', '/api/v1/namespaces', { metadata: { name: NS } });
      await new Promise((r) => setTimeout(r, 2000));
      const times = variants.map(() => [] as number[]);
      for (let i = 0; i < n + 2; i++) {
        // Each round starts at another variant: none is always the first request after the previous round.
        for (let j = 0; j < variants.length; j++) {
          const k = (i + j) % variants.length;
          const v = variants[k];
          const t = performance.now();
          await admin.request('POST', `/apis/${v.group}/${version}/namespaces/${NS}/workerclusters`, objectFor(raw, example, `${example}-${i}`, `${v.group}/${version}`));
          if (i >= 2) times[k].push(performance.now() - t);
        }
      }
      const none = median(times[0]);
      baselines.push(`batch ${b / batchSize + 1}: no rule ${none.toFixed(1)} ms, every rule ${median(times[1]).toFixed(1)} ms`);
      variants.slice(2).forEach((v, k) => rows.push({ label: v.label, cost: median(times[k + 2]) - none }));
    } finally {
      admin.close();
      await api.stop();
    }
  }
  rows.sort((a, b) => b.cost - a.cost);
  process.stdout.write([
    `Creates of ${example}, ${n} per variant (after 2 discarded), ${places.length} rules in batches of ${batchSize} (one API server each), load average ${load0.toFixed(2)} → ${os.loadavg()[0].toFixed(2)}. ${baselines.join('; ')}. Each rule alone, costliest first (median minus the no-rule median):`,
    '',
    '| rule (schema node: message) | cost ms |',
    '| --- | --- |',
    ...rows.slice(0, 15).map((r) => `| ${r.label} | ${r.cost.toFixed(1)} |`),
    '',
    `Sum of all ${rows.length} rules alone: ${rows.reduce((s, r) => s + r.cost, 0).toFixed(1)} ms.`,
    '',
  ].join('\n'));
}

async function main(): Promise<void> {
  if (process.argv[2] === '--per-rule') return perRule(Number(process.argv[3] ?? 10), process.argv[4] ?? 'edge-ap1');
  const n = Number(process.argv[2] ?? 30);
  const load0 = os.loadavg()[0];
  const api = await startKubeApiServer();
  const admin = KubeClient.fromOptions({ kubeconfig: api.kubeconfig });
  try {
    const cel = workerClusterCrd() as Json;
    const nocel = withoutCel(cel);
    for (const crd of [cel, nocel]) await admin.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    await established(admin, cel.metadata.name);
    await established(admin, nocel.metadata.name);
    await admin.request('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    await new Promise((r) => setTimeout(r, 2000)); // discovery settles
    const version = cel.spec.versions[0].name;
    const collection = (group: string) => `/apis/${group}/${version}/namespaces/${NS}/workerclusters`;
    const groups = { cel: cel.spec.group as string, nocel: NOCEL_GROUP };

    const rows: string[][] = [];
    for (const example of EXAMPLES) {
      const raw = parse(fs.readFileSync(path.join(__dirname, '..', 'clusters', `${example}.yaml`), 'utf8'));
      const times: Record<'cel' | 'nocel', { create: number[]; update: number[] }> = { cel: { create: [], update: [] }, nocel: { create: [], update: [] } };
      const warmup = 5;
      for (let i = 0; i < n + warmup; i++) {
        for (const variant of ['cel', 'nocel'] as const) {
          const name = `${example}-${i}`;
          const body = objectFor(raw, example, name, `${groups[variant]}/${version}`);
          let t = performance.now();
          const { body: created } = await admin.request<Json>('POST', collection(groups[variant]), body);
          const create = performance.now() - t;
          // An update that changes the spec (a new generation): every rule runs again, as on a GitOps sync.
          const updated = { ...created, spec: { ...created.spec, pool: { ...created.spec.pool, maxSize: created.spec.pool.maxSize + 1 } } };
          t = performance.now();
          await admin.request('PUT', `${collection(groups[variant])}/${name}`, updated);
          const update = performance.now() - t;
          if (i >= warmup) {
            times[variant].create.push(create);
            times[variant].update.push(update);
          }
        }
      }
      for (const op of ['create', 'update'] as const) {
        const c = times.cel[op];
        const o = times.nocel[op];
        rows.push([example, op, median(c).toFixed(1), p90(c).toFixed(1), median(o).toFixed(1), p90(o).toFixed(1), (median(c) - median(o)).toFixed(1)]);
      }
    }
    const load1 = os.loadavg()[0];
    const out = [
      '<!-- bench:admission-cost -->',
      '## Admission cost: the WorkerCluster CRD with and without its CEL rules',
      '',
      `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${n} objects per example and variant (after ${5} discarded), load average ${load0.toFixed(2)} → ${load1.toFixed(2)}. Produced by \`npx ts-node --transpile-only bench/admission-cost.ts ${n}\`.`,
      '',
      '| example | request | with CEL median ms | with CEL p90 ms | without CEL median ms | without CEL p90 ms | CEL cost (median difference) ms |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      ...rows.map((r) => `| ${r.join(' | ')} |`),
      '',
      '- kube-apiserver v1.37.2 and etcd 3.7.0 (scripts/kube/build.sh) on loopback, nothing else talking to them; requests one at a time from one client (KubeClient, keep-alive), each timed from sending to the full response.',
      '- "Without CEL" is the same generated CRD (lib/kube/crd.ts) with every x-kubernetes-validations removed, served under another group: the structural schema, patterns, bounds, defaults and pruning are the same, so the difference is the CEL rules alone.',
      '- The update is a PUT that changes spec.pool.maxSize (a new generation), so every rule runs again, as in a GitOps sync of a changed object.',
      '<!-- /bench:admission-cost -->',
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    admin.close();
    await api.stop();
  }
}

if (require.main === module) {
  main().catch((e) => {
    process.stderr.write(`${e?.stack ?? e}\n`);
    process.exit(1);
  });
}
