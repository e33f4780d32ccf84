import { noChannelsIn } from '../../model/channel/image-pins';
import * as fs from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { Problem } from '../../core/errors';
import { LoadedCluster } from '../../model/cluster/load';
import { validateCluster } from '../../model/cluster/validate';
import { KubeWorkerCluster, toRecord } from '../../platform/kube/resource';

const NO_KUBE_CHANNELS = noChannelsIn('the Kubernetes store');

/**
 * `validate --objects <file|->`: the live custom resources, as `kubectl get workerclusters -A -o yaml` prints them
 * (a List, or objects one per YAML document), checked by this release's rules. An operator runs the new release's
 * validate on them before upgrading the daemon (docs/kubernetes-operations.md, "Upgrading"), so whatever the new release
 * newly refuses is heard before it stalls a cluster. Each object is named `workercluster <namespace>/<name>`, as the
 * daemon names it; the API server's own metadata is left out as the daemon leaves it out (toRecord).
 */
export function loadObjects(
  file: string,
  templates: ReadonlySet<string>,
  readStdin: () => string = () => fs.readFileSync(0, 'utf8'),
): { clusters: LoadedCluster[]; problems: Problem[] } {
  const shown = file === '-' ? '(stdin)' : file;
  let text: string;
  try {
    text = file === '-' ? readStdin() : fs.readFileSync(file, 'utf8');
  } catch (e) {
    return { clusters: [], problems: [{ file: shown, path: '', message: `cannot be read: ${(e as Error).message}` }] };
  }
  const docs = parseAllDocuments(text, { prettyErrors: false });
  const list = Array.isArray(docs) ? docs : [docs];
  const items: unknown[] = [];
  const problems: Problem[] = [];
  for (const doc of list) {
    if (doc.errors.length) {
      problems.push({ file: shown, path: '', message: `YAML error: ${doc.errors[0].message.split('\n')[0]}` });
      continue;
    }
    const o = doc.toJS({ maxAliasCount: 50 }) as { kind?: unknown; items?: unknown } | null;
    if (o === null) continue;
    if (o.kind === 'List' || (o.kind === 'WorkerClusterList' && Array.isArray(o.items)))
      items.push(...(Array.isArray(o.items) ? (o.items as unknown[]) : []));
    else items.push(o);
  }
  const clusters: LoadedCluster[] = [];
  items.forEach((item, i) => {
    const o = item as Partial<KubeWorkerCluster> | null;
    if (o?.kind !== 'WorkerCluster' || typeof o.metadata?.name !== 'string') {
      problems.push({
        file: shown,
        path: `items[${i}]`,
        message: `is not a WorkerCluster (kind ${JSON.stringify(o?.kind ?? null)}); give the output of kubectl get workerclusters -A -o yaml`,
      });
      return;
    }
    const record = toRecord(o as KubeWorkerCluster);
    // Objects of a management cluster: the Kubernetes store keeps no channels yet, so a pool on a channel is refused.
    const r = validateCluster(record.raw, { file: record.source, templates, images: NO_KUBE_CHANNELS });
    problems.push(...r.problems);
    if (r.cluster) clusters.push({ file: record.source, cluster: r.cluster });
  });
  return { clusters, problems };
}
