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

import { Json } from '../test/helpers/json';
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

async function established(admin: KubeClient, name: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const { body } = await admin.request<Json>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    if (body.status?.conditions?.some((c: Json) => c.type === 'Established' && c.status === 'True')) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} not established`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];

/** The CRD with the index-th rule at `at` (a path of property names under spec) removed, under another group. */
function withoutRule(crd: Json, at: string[], index: number, group: string): Json {
  const copy = structuredClone(crd);
  let node = copy.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  for (const p of at) node = node.properties[p].items ?? node.properties[p];
  node['x-kubernetes-validations'].splice(index, 1);
  copy.metadata = { name: `${copy.spec.names.plural}.${group}` };
  copy.spec.group = group;
  return copy;
}

/** Creates of edge-ap1 with each top-level rule left out in turn, against the full CRD. */
async function perRule(n: number): Promise<void> {
  const load0 = os.loadavg()[0];
  const api = await startKubeApiServer();
  const admin = KubeClient.fromOptions({ kubeconfig: api.kubeconfig });
  try {
    const cel = workerClusterCrd() as Json;
    const specNode = cel.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    const places: [string[], Json[]][] = [
      [[], specNode['x-kubernetes-validations'] ?? []],
      [['listeners'], specNode.properties.listeners['x-kubernetes-validations'] ?? []],
      [['securityGroupRules'], specNode.properties.securityGroupRules['x-kubernetes-validations'] ?? []],
    ];
    const variants: { label: string; group: string; crd: Json }[] = [{ label: '(every rule)', group: cel.spec.group, crd: cel }];
    for (const [at, rules] of places) {
      rules.forEach((r, i) => {
        const group = `r${variants.length}.worker-stacks.io`;
        const label = `spec${at.map((p) => `.${p}`).join('')}: ${(r.message ?? r.messageExpression ?? r.rule).replace(/\|/g, '/').slice(0, 90)}`;
        variants.push({ label, group, crd: withoutRule(cel, at, i, group) });
      });
    }
    for (const v of variants) await admin.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', v.crd);
    for (const v of variants) await established(admin, v.crd.metadata.name);
    await admin.request('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    await new Promise((r) => setTimeout(r, 2000));
    const version = cel.spec.versions[0].name;
    const raw = parse(fs.readFileSync(path.join(__dirname, '..', 'clusters', 'edge-ap1.yaml'), 'utf8'));
    const times = variants.map(() => [] as number[]);
    for (let i = 0; i < n + 2; i++) {
      // Each round starts at another variant: none is always the first request after the previous round.
      for (let j = 0; j < variants.length; j++) {
        const k = (i + j) % variants.length;
        const v = variants[k];
        const t = performance.now();
        await admin.request('POST', `/apis/${v.group}/${version}/namespaces/${NS}/workerclusters`, { ...raw, apiVersion: `${v.group}/${version}`, metadata: { name: `edge-${i}`, namespace: NS } });
        if (i >= 2) times[k].push(performance.now() - t);
      }
    }
    const all = median(times[0]);
    const rows = variants.map((v, k) => ({ label: v.label, ms: median(times[k]) })).slice(1).sort((a, b) => a.ms - b.ms);
    process.stdout.write([
      `Creates of edge-ap1, ${n} per variant (after 2 discarded), load average ${load0.toFixed(2)} → ${os.loadavg()[0].toFixed(2)}: with every rule, median ${all.toFixed(1)} ms. Left out one at a time, the rules whose absence saves the most:`,
      '',
      '| rule left out | create median ms | saved ms |',
      '| --- | --- | --- |',
      ...rows.slice(0, 8).map((r) => `| ${r.label} | ${r.ms.toFixed(1)} | ${(all - r.ms).toFixed(1)} |`),
      '',
    ].join('\n'));
  } finally {
    admin.close();
    await api.stop();
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === '--per-rule') return perRule(Number(process.argv[3] ?? 10));
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
          const body = { ...raw, apiVersion: `${groups[variant]}/${version}`, metadata: { name, namespace: NS } };
          let t = performance.now();
          const { body: created } = await admin.request<Json>('POST', collection(groups[variant]), body);
          const create = performance.now() - t;
          // An update that changes the spec (a new generation): every rule runs again, as on a GitOps sync.
          const updated = { ...created, spec: { ...created.spec, pool: { ...created.spec.pool, maxSize: Number(created.spec.pool.maxSize) + 1 } } };
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
      `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${n} objects per example and variant (after 5 discarded), load average ${load0.toFixed(2)} → ${load1.toFixed(2)}. Produced by \`npx ts-node --transpile-only bench/admission-cost.ts ${n}\`.`,
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

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
