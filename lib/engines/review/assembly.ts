import * as fs from 'node:fs';
import * as path from 'node:path';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { extensionPattern, formatByExtension } from '../../model/cloudconfig/formats';
import { ConfigFormat } from '../../model/cloudconfig/node-config';
import { ReviewError } from '../../core/errors';
import { BOOTSTRAP_STACK_NAME, CLUSTER_TAG, POOL_SEPARATOR, WORKER_STACK_PREFIX } from '../../core/naming';
import { asRecord, JsonObject } from '../../core/json';

/** The big config object a worker stack publishes, read back from the cloud assembly. */
export interface ConfigAsset {
  /** SHA-256 of `bytes`, hex (the asset hash; checked when read). */
  readonly checksum: string;
  readonly format: ConfigFormat;
  /** Exactly the bytes `cdk deploy` would store in S3. */
  readonly bytes: Buffer;
}

/** One worker stack of a cloud assembly. */
export interface WorkerStackSnapshot {
  /** The cluster name (metadata.name). */
  readonly cluster: string;
  /** `WorkerStack-<cluster>`, or a pool's own `WorkerStack-<cluster>-Pool-<pool>`. */
  readonly stackName: string;
  /** The pool whose own stack this is; undefined for the cluster's shared stack. @default undefined */
  readonly pool?: string;
  /** `aws://account/region` */
  readonly environment: string;
  /** The template as CloudFormation gets it. */
  readonly template: JsonObject;
  readonly templateFile: string;
  /**
   * Construct paths by logical id, from the stack's `aws:cdk:logicalId`
   * metadata: where `cdk diff` finds the paths of outputs, parameters and
   * conditions (resources carry theirs in the template).
   */
  readonly logicalIdPaths: Readonly<Record<string, string>>;
  readonly config?: ConfigAsset;
}

export interface AssemblySnapshot {
  readonly outdir: string;
  /** Worker stacks by cluster name, sorted by name: each cluster's shared stack `WorkerStack-<cluster>`. */
  readonly stacks: ReadonlyMap<string, WorkerStackSnapshot>;
  /** The own stacks of pools other than `default`, by cluster name, then pool name. */
  readonly poolStacks: ReadonlyMap<string, ReadonlyMap<string, WorkerStackSnapshot>>;
  /** Environments (`aws://account/region`) that have a bootstrap stack. */
  readonly bootstrapEnvironments: ReadonlySet<string>;
}

const CONFIG_ASSET = new RegExp(`^asset\\.([0-9a-f]{64})\\.(${extensionPattern()})$`);

type MetadataEntries = Record<string, Array<{ type: string; data?: unknown }>>;

interface ManifestArtifact {
  type: string;
  environment?: string;
  metadata?: MetadataEntries;
  additionalMetadataFile?: string;
  properties?: { templateFile?: string; stackName?: string; file?: string; tags?: Record<string, string> };
  dependencies?: string[];
}

/**
 * Reads the worker stacks of a cloud assembly (a `cdk synth` output
 * directory): each template and its node config asset (`asset.<sha>.ign|yaml`,
 * found through the stack's `*.assets.json` manifest).
 */
export function readAssembly(outdir: string, label: string): AssemblySnapshot {
  const manifest = readJson(path.join(outdir, 'manifest.json'), label) as {
    artifacts?: Record<string, ManifestArtifact>;
  };
  const artifacts = manifest.artifacts ?? {};
  const stacks = new Map<string, WorkerStackSnapshot>();
  const poolStacks = new Map<string, Map<string, WorkerStackSnapshot>>();
  const bootstrapEnvironments = new Set<string>();
  for (const id of Object.keys(artifacts).sort()) {
    const a = artifacts[id];
    if (a.type !== 'aws:cloudformation:stack') continue;
    const stackName = a.properties?.stackName ?? id;
    if (stackName === BOOTSTRAP_STACK_NAME || id.startsWith(`${BOOTSTRAP_STACK_NAME}-`)) {
      if (a.environment) bootstrapEnvironments.add(a.environment);
      continue;
    }
    if (!stackName.startsWith(WORKER_STACK_PREFIX)) continue;
    const templateFile = path.join(outdir, a.properties?.templateFile ?? `${id}.template.json`);
    const template = asRecord(readJson(templateFile, label));
    const { cluster, pool } = stackOwner(stackName, a.properties?.tags?.[CLUSTER_TAG]);
    const snapshot: WorkerStackSnapshot = {
      cluster,
      stackName,
      ...(pool === undefined ? {} : { pool }),
      environment: a.environment ?? '',
      template,
      templateFile,
      logicalIdPaths: logicalIdPaths(outdir, a, label),
      config: configAsset(outdir, artifacts, id, a, label),
    };
    if (pool === undefined) stacks.set(cluster, snapshot);
    else {
      const own = poolStacks.get(cluster) ?? new Map<string, WorkerStackSnapshot>();
      poolStacks.set(cluster, own.set(pool, snapshot));
    }
  }
  return { outdir, stacks, poolStacks, bootstrapEnvironments };
}

/**
 * Which cluster (and pool) a worker stack belongs to: `WorkerStack-<cluster>-Pool-<pool>` is a pool's own stack (no
 * cluster name has the capital of `-Pool-`: naming.ts poolStackName), any other `WorkerStack-<name>` the shared stack
 * of the cluster `<name>`. A stack whose cluster tag names another cluster than its name does is its name's: a stack
 * is never taken for a cluster's shared stack, or one of its pools, under a name that is not that stack's.
 */
function stackOwner(stackName: string, clusterTag: string | undefined): { cluster: string; pool?: string } {
  const rest = stackName.slice(WORKER_STACK_PREFIX.length);
  const at = rest.indexOf(POOL_SEPARATOR);
  const owner =
    at < 0 ? { cluster: rest } : { cluster: rest.slice(0, at), pool: rest.slice(at + POOL_SEPARATOR.length) };
  return clusterTag === undefined || clusterTag === owner.cluster ? owner : { cluster: rest };
}

/** A side on which nothing was synthesized: no stacks. */
export function emptyAssembly(outdir: string): AssemblySnapshot {
  return { outdir, stacks: new Map(), poolStacks: new Map(), bootstrapEnvironments: new Set() };
}

/** The stack's logical ids and their construct paths, read as the CDK CLI reads them (manifest and metadata file). */
function logicalIdPaths(outdir: string, a: ManifestArtifact, label: string): Record<string, string> {
  const all = a.additionalMetadataFile
    ? (readJson(path.join(outdir, a.additionalMetadataFile), label) as MetadataEntries)
    : {};
  const out: Record<string, string> = {};
  for (const entries of [all, a.metadata ?? {}]) {
    for (const [p, list] of Object.entries(entries)) {
      for (const e of list)
        if (e.type === 'aws:cdk:logicalId' && typeof e.data === 'string' && !(e.data in out)) out[e.data] = p;
    }
  }
  return out;
}

function configAsset(
  outdir: string,
  artifacts: Partial<Record<string, ManifestArtifact>>,
  id: string,
  stack: ManifestArtifact,
  label: string,
): ConfigAsset | undefined {
  // The asset manifests among the stack's dependencies (a dependency may name an artifact the assembly lacks).
  const manifestFiles = [...(stack.dependencies ?? []), `${id}.assets`].flatMap((d) => {
    const artifact = artifacts[d];
    const file = artifact?.type === 'cdk:asset-manifest' ? artifact.properties?.file : undefined;
    return file ? [file] : [];
  });
  for (const file of manifestFiles) {
    const assets = readJson(path.join(outdir, file), label) as {
      files?: Record<string, { source?: { path?: string } }>;
    };
    for (const entry of Object.values(assets.files ?? {})) {
      const match = CONFIG_ASSET.exec(entry.source?.path ?? '');
      if (!match) continue;
      const bytes = fs.readFileSync(path.join(outdir, match[0]));
      const checksum = sha256Hex(bytes);
      if (checksum !== match[1])
        throw new ReviewError(`${label}: ${match[0]} in ${outdir} does not hash to its name (${checksum})`);
      // The pattern only matches the formats' own extensions, so this finds one.
      const format = formatByExtension(match[2]);
      if (format) return { checksum, format, bytes };
    }
  }
  return undefined;
}

/** A JSON file of the cloud assembly, as parsed (the CDK wrote it; its shape is the assembly schema's). */
function readJson(file: string, label: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ReviewError(`${label}: cannot read ${file} of the cloud assembly: ${(e as Error).message}`, { cause: e });
  }
}
