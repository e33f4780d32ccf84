import { imageResolver, KnownChannel, noChannelsIn } from '../../model/channel/image-pins';
import { CHANNEL_KIND } from '../../model/channel/channel-schema';
import { asChannelStatus, EMPTY_CHANNEL_STATUS } from '../../model/channel/channel-status';
import { validateChannelObject } from '../../engines/channels';
import { API_VERSION } from '../../model/cluster/schema/schema';
import * as fs from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { Problem } from '../../core/errors';
import { LoadedCluster } from '../../model/cluster/load';
import { validateCluster } from '../../model/cluster/validate';
import { KubeWorkerCluster, toRecord } from '../../platform/kube/resource';

/** Without WorkerImageChannel objects in the input, a pool on a channel is refused naming how to give them. */
const NO_CHANNELS_GIVEN = noChannelsIn(
  'the input has no WorkerImageChannel objects; give them with the clusters: kubectl get workerclusters,workerimagechannels -A -o yaml',
);

/**
 * `validate --objects <file|->`: the live custom resources, as `kubectl get workerclusters -A -o yaml` prints them
 * (a List, or objects one per YAML document), checked by this release's rules; WorkerImageChannel objects in the same
 * input (`kubectl get workerclusters,workerimagechannels -A -o yaml`) pin the pools that name them, from their status. An operator runs the new release's
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
  const channels: KnownChannel[] = [];
  items.forEach((item) => {
    const o = item as { kind?: unknown; metadata?: { name?: unknown }; spec?: unknown; status?: unknown } | null;
    if (o?.kind !== CHANNEL_KIND || typeof o.metadata?.name !== 'string') return;
    const name = o.metadata.name;
    const checked = validateChannelObject(
      { apiVersion: API_VERSION, kind: CHANNEL_KIND, metadata: { name }, spec: o.spec },
      `${CHANNEL_KIND}/${name}`,
    );
    problems.push(...checked.problems);
    const status = o.status === undefined ? EMPTY_CHANNEL_STATUS : asChannelStatus(o.status);
    if (!status) problems.push({ file: `${CHANNEL_KIND}/${name}`, path: 'status', message: 'is not a channel status' });
    channels.push({ name, status: status ?? EMPTY_CHANNEL_STATUS, ...(checked.spec ? { spec: checked.spec } : {}) });
  });
  const images = channels.length ? imageResolver(channels) : NO_CHANNELS_GIVEN;
  const clusters: LoadedCluster[] = [];
  items.forEach((item, i) => {
    const o = item as Partial<KubeWorkerCluster> | null;
    if (o?.kind === CHANNEL_KIND) return;
    if (o?.kind !== 'WorkerCluster' || typeof o.metadata?.name !== 'string') {
      problems.push({
        file: shown,
        path: `items[${i}]`,
        message: `is not a WorkerCluster (kind ${JSON.stringify(o?.kind ?? null)}); give the output of kubectl get workerclusters -A -o yaml`,
      });
      return;
    }
    const record = toRecord(o as KubeWorkerCluster);
    const r = validateCluster(record.raw, { file: record.source, templates, images });
    problems.push(...r.problems);
    if (r.cluster) clusters.push({ file: record.source, cluster: r.cluster });
  });
  return { clusters, problems };
}
