import { WorkerCluster } from '../cluster/schema/schema';
import { DEFAULT_POOL, NodePool, poolNamed, poolsOf, primaryPool } from '../cluster/pools/pools';
import { TemplateError } from '../../core/errors';
import { sha256Hex } from './checksum';
import { SignalTarget } from './format';
import { FORMATS } from './formats';
import { ConfigFormat, NodeConfig, normalizeNodeConfig } from './node-config';
import { loadTemplate } from './templates';
import { TemplateSource } from './template-source';
import { poolStackName, WORKER_GROUP_LOGICAL_ID, workerStackName } from '../../core/naming';

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
  /** Where the pool's nodes signal CloudFormation: a format whose user data signals (eks-al2023) is given it. */
  readonly signal: SignalTarget;
}

/**
 * The values a template sees. Maps become sorted lists here, so that a
 * template's `{{#each}}` never depends on YAML key order.
 * @internal exported for its tests
 */
export function templateContext(cluster: WorkerCluster, poolName?: string): Record<string, unknown> {
  const pool = poolOf(cluster, poolName);
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
      // One entry per key with its `value:Effect` list, in the same order (Bottlerocket's node-taints: a key once).
      nodeTaintsByKey: [...new Set(taints.map((t) => t.key))].map((key) => ({
        key,
        taints: taints.filter((t) => t.key === key).map((t) => `${t.value}:${t.effect}`),
      })),
    },
    rollingUpdate: pool.rollingUpdate,
    signal: signalTarget(cluster, pool),
  };
}

/** The pool named (@default the first). */
function poolOf(cluster: WorkerCluster, poolName?: string): NodePool {
  return (poolName === undefined ? undefined : poolNamed(cluster.spec, poolName)) ?? primaryPool(cluster.spec);
}

/**
 * Where a pool's nodes send their health signal: constant for a pool, so it never rolls nodes by itself. Every pool's
 * group has the construct path Pool/Group/ASG in its own stack, so the same logical id.
 */
function signalTarget(cluster: WorkerCluster, pool: NodePool): SignalTarget {
  return {
    region: cluster.spec.region,
    stackName:
      pool.name === DEFAULT_POOL
        ? workerStackName(cluster.metadata.name)
        : poolStackName(cluster.metadata.name, pool.name),
    logicalId: WORKER_GROUP_LOGICAL_ID,
    timeoutSeconds: cluster.spec.cloudConfig.values.nodeReadyTimeoutSeconds,
  };
}

/**
 * The cluster as one pool's nodes see it: the pool's template and values over the cluster's, its labels over the
 * cluster's node labels, its taints after the cluster's. For spec.pool (the pool default, with none of its own) it is
 * the cluster itself, so a single-pool object renders the same bytes as before pools existed.
 */
export function poolView(cluster: WorkerCluster, poolName: string): { cluster: WorkerCluster; pool: NodePool } {
  const pool = poolsOf(cluster.spec).find((p) => p.name === poolName);
  if (!pool) throw new Error(`${cluster.metadata.name} has no pool ${poolName}`);
  const own = pool.cloudConfig;
  if (!own && Object.keys(pool.labels).length === 0 && pool.taints.length === 0) return { cluster, pool };
  const base = cluster.spec.cloudConfig;
  const values = {
    ...base.values,
    ...(own?.values ?? {}),
    nodeLabels: { ...base.values.nodeLabels, ...pool.labels },
    nodeTaints: [...base.values.nodeTaints, ...pool.taints],
  } as typeof base.values;
  return {
    cluster: {
      ...cluster,
      spec: { ...cluster.spec, cloudConfig: { template: own?.template ?? base.template, values } },
    },
    pool,
  };
}

/** Every pool's big config, by pool name, in the object's order. */
export function renderPools(cluster: WorkerCluster, templates: TemplateSource): ReadonlyMap<string, RenderedConfig> {
  return new Map(poolsOf(cluster.spec).map((p) => [p.name, renderConfig(cluster, templates, p.name)]));
}

/**
 * Renders the big config of one (validated) cluster's pool (@default its first). Deterministic: same object, same
 * bytes.
 */
export function renderConfig(cluster: WorkerCluster, templates: TemplateSource, poolName?: string): RenderedConfig {
  const seen = poolName === undefined ? cluster : poolView(cluster, poolName).cluster;
  const template = loadTemplate(seen.spec.cloudConfig.template, templates);
  const ctx = templateContext(seen, poolName);
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
  const { text, checksum } = serialized(node);
  const bytes = Buffer.from(text, 'utf8');
  const signal = signalTarget(seen, poolOf(seen, poolName));
  return { format: node.format, bytes, checksum, extension: format.extension, node, signal };
}

/**
 * The node config's bytes (as text) and their checksum, by the config's JSON: a serializer is a pure function of the
 * config, so an equal config is the same bytes. A reconciler renders the same configs pass after pass, and the
 * serializers (YAML's above all) were most of a render's time (issue 34: a quarter of the fault simulator's).
 * Bounded: when full it starts again empty.
 */
function serialized(node: NodeConfig): { readonly text: string; readonly checksum: string } {
  const key = JSON.stringify(node);
  const known = serializations.get(key);
  if (known) return known;
  const text = FORMATS[node.format].serialize(node);
  const value = { text, checksum: sha256Hex(Buffer.from(text, 'utf8')) };
  if (serializations.size >= MAX_SERIALIZATIONS) serializations.clear();
  serializations.set(key, value);
  return value;
}

const MAX_SERIALIZATIONS = 64;
const serializations = new Map<string, { readonly text: string; readonly checksum: string }>();
