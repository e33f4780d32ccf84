import { WorkerCluster } from '../cluster/schema';
import { TemplateError } from '../../core/errors';
import { sha256Hex } from './checksum';
import { FORMATS } from './formats';
import { ConfigFormat, NodeConfig, normalizeNodeConfig } from './node-config';
import { DEFAULT_TEMPLATES_DIR, loadTemplate } from './templates';
import { WORKER_GROUP_LOGICAL_ID, workerStackName } from '../../core/naming';

export interface RenderedConfig {
  readonly format: ConfigFormat;
  /** Exactly the bytes stored in S3. */
  readonly bytes: Buffer;
  /** SHA-256 of `bytes`, hex. */
  readonly checksum: string;
  /** File extension of the stored object (the format's: `ign`, `yaml`). */
  readonly extension: string;
  /** The same content, format-neutral (for reviews and "why it rolled"). */
  readonly node: NodeConfig;
}

/**
 * The values a template sees. Maps become sorted lists here, so that a
 * template's `{{#each}}` never depends on YAML key order.
 * @internal exported for its tests
 */
export function templateContext(cluster: WorkerCluster): Record<string, unknown> {
  const v = cluster.spec.cloudConfig.values;
  const labels = Object.keys(v.nodeLabels)
    .sort()
    .map((key) => ({ key, value: v.nodeLabels[key] }));
  // A total order (value breaks ties), so the output never depends on the list order in the YAML.
  const taintKey = (t: { key: string; effect: string; value: string }) => [t.key, t.effect, t.value].join('\0');
  const taints = [...v.nodeTaints].sort((a, b) => (taintKey(a) < taintKey(b) ? -1 : taintKey(a) > taintKey(b) ? 1 : 0));
  return {
    cluster: { name: cluster.metadata.name, account: cluster.spec.account, region: cluster.spec.region },
    values: {
      ...v,
      clusterCA: v.clusterCA.endsWith('\n') ? v.clusterCA : `${v.clusterCA}\n`,
      nodeLabels: labels,
      nodeTaints: taints,
      nodeLabelsFlag: labels.map((l) => `${l.key}=${l.value}`).join(','),
      nodeTaintsFlag: taints.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(','),
    },
    rollingUpdate: cluster.spec.pool.rollingUpdate,
    // Where the node's health signal goes: constant for a cluster, so it never rolls nodes by itself.
    signal: { stackName: workerStackName(cluster.metadata.name), logicalId: WORKER_GROUP_LOGICAL_ID },
  };
}

/** Renders the big config of one (validated) cluster. Deterministic: same object, same bytes. */
export function renderConfig(cluster: WorkerCluster, templatesDir: string = DEFAULT_TEMPLATES_DIR): RenderedConfig {
  const template = loadTemplate(cluster.spec.cloudConfig.template, templatesDir);
  const ctx = templateContext(cluster);
  const run = (what: string, source: string, fn: () => string) => {
    try {
      return fn();
    } catch (e) {
      throw new TemplateError(`template ${template.name}: ${what} (from ${source}): ${(e as Error).message}`, {
        cause: e,
        hint: 'the template names a value the cluster object does not have; add it to spec.cloudConfig.values or fix the template',
      });
    }
  };
  const node = normalizeNodeConfig({
    format: template.format,
    files: template.files.map((f) => ({
      path: f.path,
      mode: f.mode,
      contents: run(f.path, f.source, () => f.render(ctx)),
    })),
    units: template.units.map((u) => ({
      name: u.name,
      enabled: u.enabled,
      contents: run(u.name, u.source, () => u.render(ctx)),
    })),
  });
  const format = FORMATS[node.format];
  const bytes = Buffer.from(format.serialize(node), 'utf8');
  return { format: node.format, bytes, checksum: sha256Hex(bytes), extension: format.extension, node };
}
