import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { KubeClient } from '../lib/kube/client';
import { workerClusterCrd } from '../lib/kube/crd';
import { startKubeApiServer } from '../test/helpers/kube-apiserver';
// eslint-disable-next-line
const m = require('./admission-cost');
type Json = Record<string, any>;
const NS = 'bench';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
async function main() {
  const example = process.argv[3] ?? 'edge-ap1';
  const n = Number(process.argv[2] ?? 15);
  const cel = workerClusterCrd() as Json;
  const version = cel.spec.versions[0].name;
  const raw = parse(fs.readFileSync(path.join(__dirname, '..', 'clusters', `${example}.yaml`), 'utf8')) as Json;
  const places = m.rulePlaces(cel.spec.versions[0].schema.openAPIV3Schema);
  const defs: [string, (p: any) => boolean][] = JSON.parse(fs.readFileSync('/tmp/hcel/variants.json', 'utf8')).map(([l, re, inv]: [string, string, boolean]) => [l, (p: any) => new RegExp(re).test(p.label) !== inv]);
  const variants = defs.map(([label, keep], i) => ({ label, group: `v${i}.worker-stacks.io`, crd: m.withRules(cel, keep, `v${i}.worker-stacks.io`), count: places.filter(keep).length }));
  const api = await startKubeApiServer();
  const admin = KubeClient.fromOptions({ kubeconfig: api.kubeconfig });
  try {
    for (const v of variants) await admin.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', v.crd);
    for (const v of variants) await m.established(admin, v.crd.metadata.name);
    await admin.request('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    await new Promise((r) => setTimeout(r, 2000));
    const times = variants.map(() => [] as number[]);
    for (let i = 0; i < n + 2; i++) {
      for (let j = 0; j < variants.length; j++) {
        const k = (i + j) % variants.length;
        const v = variants[k];
        const t = performance.now();
        await admin.request('POST', `/apis/${v.group}/${version}/namespaces/${NS}/workerclusters`, m.objectFor(raw, example, `${example}-${i}`, `${v.group}/${version}`));
        if (i >= 2) times[k].push(performance.now() - t);
      }
    }
    console.log(`load ${os.loadavg()[0]}`);
    variants.forEach((v, k) => console.log(`${median(times[k]).toFixed(1).padStart(7)}  ${v.count.toString().padStart(4)}  ${v.label}`));
  } finally {
    admin.close();
    await api.stop();
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
