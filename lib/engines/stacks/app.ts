import * as fs from 'node:fs';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { addAwsSolutionsChecks } from './nag';
import { LoadedCluster } from '../../model/cluster/load';
import { WorkerCluster } from '../../model/cluster/schema/schema';
import { RenderedConfig } from '../../model/cloudconfig/render';
import { renderCluster } from '../../model/cluster/derive';
import { poolNamed, poolsOf, StackUnit, stackUnits } from '../../model/cluster/pools/pools';
import { DEFAULT_TEMPLATES_DIR, templateDirectory } from '../../platform/files/template-directory';
import { RenderError, UsageError } from '../../core/errors';
import { DeployerTrust, isPrincipalArn } from './bootstrap-roles';
import { BootstrapStack } from './bootstrap-stack';
import { WorkerStack } from './worker-stack';
import { PoolStack } from './pool-stack';

export interface FleetAppProps {
  /** Validated clusters (see loadValidClusters): an invalid fleet never reaches this point. */
  readonly clusters: readonly LoadedCluster[];
  /** Where the cloud assembly goes. @default CDK_OUTDIR from the CDK CLI, else a temp dir */
  readonly outdir?: string;
  /** Template directory. @default the repository's cloudconfig/ */
  readonly templatesDir?: string;
  /** Run cdk-nag's AwsSolutions pack at synth. @default true */
  readonly nag?: boolean;
  /** Also build one bootstrap stack per account and region. @default true */
  readonly bootstrap?: boolean;
  /**
   * Configs already rendered by the caller, by stack name: the config of the stack's pool (the reconciler renders
   * before it synthesizes). @default render here
   */
  readonly rendered?: ReadonlyMap<string, RenderedConfig>;
  /**
   * Build only these stacks (names from model/cluster/pools/pools.ts stackUnits): a pool's stack takes what it shares from
   * the shared stack's exports by name, so it synthesizes without the others. @default every stack of every cluster
   */
  readonly only?: ReadonlySet<string>;
  /**
   * aws-cdk-lib's built-in CloudFormation schema validation at synth (about 1.7 s and 350 MB per process).
   * @default only when the environment says CDK_VALIDATION=true (see docs/getting-started.md: every template is checked by cfn-lint
   * in the tests, by cdk-nag at every synth, and by CloudFormation itself when a change set is created)
   */
  readonly cfnValidation?: boolean;
  /**
   * Record every element's logical id in the assembly's metadata (`aws:cdk:logicalId`), which the CDK CLI and
   * `review` read to name a resource by its construct path. The template is the same either way. The reconciler
   * reads only the template and the assets of its scratch assembly, so it leaves this out: each entry is resolved
   * when the manifest is written, about 4 % of a synthesis.
   * @default true
   */
  readonly logicalIdMetadata?: boolean;
  /**
   * Who may assume each bootstrap stack's deployer role. @default from the CDK context (`cdk deploy -c
   * worker-stacks:trust=<principal ARN>[,<ARN>] [-c worker-stacks:external-id=X] [-c worker-stacks:role-name=N]`), else
   * none: the bootstrap stacks make the bucket and the node boundary only (single-credential mode)
   */
  readonly trust?: DeployerTrust;
}

export interface FleetApp {
  readonly app: App;
  /** The shared stack of each cluster, by cluster name. */
  readonly stacks: ReadonlyMap<string, WorkerStack>;
  /** The first pool's config of each cluster, by cluster name (the only pool of a single-pool cluster). */
  readonly configs: ReadonlyMap<string, RenderedConfig>;
  /** Every stack of every cluster (shared and pools), by stack name, in stackUnits order per cluster. */
  readonly units: ReadonlyMap<string, WorkerStack | PoolStack>;
  /** The config of each stack's pool, by stack name (none for a shared stack without the pool default). */
  readonly unitConfigs: ReadonlyMap<string, RenderedConfig>;
  readonly bootstrapStacks: readonly BootstrapStack[];
}

/**
 * Builds the CDK app of a fleet: every stack of every cluster (model/cluster/pools/pools.ts stackUnits: the shared
 * WorkerStack-<cluster>, then one WorkerStack-<cluster>-Pool-<pool> per other pool, each depending on the shared one, so
 * `cdk deploy --all` creates it first), one bootstrap stack per account/region.
 */
export function buildFleetApp(props: FleetAppProps): FleetApp {
  // No construct stack traces (the CDK CLI turns them off too unless --debug), no tree.json and no performance
  // counters: none of them is in a template, and together they were about half of each synthesis.
  const app = new App({
    outdir: props.outdir,
    stackTraces: false,
    treeMetadata: false,
    analyticsReporting: false,
    performanceReporting: false,
    builtinCloudFormationValidation: props.cfnValidation ?? process.env.CDK_VALIDATION === 'true',
    context: {
      'aws:cdk:enable-path-metadata': true,
      'aws:cdk:disable-creation-stack-traces': true,
      ...(props.logicalIdMetadata === false ? { [cxapi.DISABLE_LOGICAL_ID_METADATA]: true } : {}),
    },
  });
  if (props.nag ?? true) addAwsSolutionsChecks(app);
  const stacks = new Map<string, WorkerStack>();
  const configs = new Map<string, RenderedConfig>();
  const units = new Map<string, WorkerStack | PoolStack>();
  const unitConfigs = new Map<string, RenderedConfig>();
  const envs = new Map<string, { account: string; region: string }>();
  const templatesDir = props.templatesDir ?? DEFAULT_TEMPLATES_DIR;
  for (const { cluster, file } of props.clusters) {
    const name = cluster.metadata.name;
    let derived: ReadonlyMap<string, RenderedConfig> | undefined;
    const configOf = (unit: StackUnit): RenderedConfig | undefined => {
      // A shared stack without the pool default boots no node, but carries the first pool's checksum in its
      // ConfigChecksum output: what the reconciler compares for that stack (model/cluster/pools/pools.ts, prepare.ts).
      const pool = unit.pool ?? poolsOf(cluster.spec).at(0)?.name;
      if (pool === undefined) return undefined;
      const config =
        props.rendered?.get(unit.stackName) ?? (derived ??= renderedOrThrow(cluster, file, templatesDir)).get(pool);
      if (!config) throw new Error(`${name}: no config rendered for its pool ${pool}`);
      unitConfigs.set(unit.stackName, config);
      return config;
    };
    let shared: WorkerStack | undefined;
    for (const unit of stackUnits(cluster)) {
      if (props.only && !props.only.has(unit.stackName)) continue;
      const config = configOf(unit);
      if (unit.shared) {
        shared = new WorkerStack(app, { cluster, config });
        stacks.set(name, shared);
        units.set(unit.stackName, shared);
        continue;
      }
      const pool = unit.pool === undefined ? undefined : poolNamed(cluster.spec, unit.pool);
      if (!pool || !config) throw new Error(`${name}: no pool for the stack ${unit.stackName}`);
      const stack = new PoolStack(app, { cluster, pool, config });
      // The exports it imports must exist first: `cdk deploy --all` (and a deploy of this stack alone) deploys the shared stack before.
      if (shared) stack.addStackDependency(shared, 'imports the security group, instance profile and target groups');
      units.set(unit.stackName, stack);
    }
    const first = poolsOf(cluster.spec).at(0);
    const firstConfig =
      first && unitConfigs.get(stackUnits(cluster).find((u) => u.pool === first.name)?.stackName ?? '');
    if (firstConfig) configs.set(name, firstConfig);
    envs.set(`${cluster.spec.account}/${cluster.spec.region}`, {
      account: cluster.spec.account,
      region: cluster.spec.region,
    });
  }
  const trust = props.trust ?? trustFromContext(app);
  const bootstrapStacks =
    (props.bootstrap ?? true)
      ? [...envs.entries()]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([, env]) => new BootstrapStack(app, { ...env, trust }))
      : [];
  return { app, stacks, configs, units, unitConfigs, bootstrapStacks };
}

/** The two input directories of the CDK app. */
export interface AppInputDirs {
  readonly clustersDir: string;
  readonly templatesDir: string;
}

/**
 * Where `cdk synth` reads its inputs: WORKER_STACKS_CLUSTERS and WORKER_STACKS_TEMPLATES, else the defaults. Each
 * must be an existing directory: a typo in a variable is a UsageError that names the variable and the fix, never
 * a stack trace from deep inside the loader (nor, for templates, "unknown template" on every cluster).
 */
export function appInputDirs(env: NodeJS.ProcessEnv, defaults: AppInputDirs): AppInputDirs {
  const dir = (variable: string, fallback: string, what: string): string => {
    const given = env[variable];
    const resolved = path.resolve(given ?? fallback);
    if (fs.statSync(resolved, { throwIfNoEntry: false })?.isDirectory()) return resolved;
    const problem = fs.existsSync(resolved) ? 'is not a directory' : 'does not exist';
    if (given === undefined) {
      throw new UsageError(`the default ${what} directory ${resolved} ${problem}`, {
        hint: `run from the repository, or set ${variable} to a directory of ${what}`,
      });
    }
    throw new UsageError(`${variable}=${given}: ${resolved} ${problem}`, {
      hint: `set ${variable} to a directory of ${what}, or unset it to use ${fallback}`,
    });
  };
  return {
    clustersDir: dir('WORKER_STACKS_CLUSTERS', defaults.clustersDir, 'cluster objects (*.yaml)'),
    templatesDir: dir('WORKER_STACKS_TEMPLATES', defaults.templatesDir, 'cloud-config templates'),
  };
}

/** The deployer role's trust from the CDK context (`-c worker-stacks:trust=…`), as `cdk deploy WorkerStacks-Bootstrap-…` passes it. */
export function trustFromContext(app: App): DeployerTrust | undefined {
  const given = contextText(app, 'worker-stacks:trust');
  if (!given) return undefined;
  const principals = given
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = principals.filter((p) => !isPrincipalArn(p));
  if (bad.length)
    throw new UsageError(`worker-stacks:trust: ${bad.join(', ')} is not a principal ARN`, {
      hint: 'give the management role or user ARN, e.g. -c worker-stacks:trust=arn:aws:iam::111111111111:role/worker-stacks-daemon',
    });
  return {
    principals,
    externalId: contextText(app, 'worker-stacks:external-id'),
    roleName: contextText(app, 'worker-stacks:role-name'),
  };
}

/** A context value as text, undefined when empty: -c gives a string; cdk.json may give a number or a list (its items comma-joined). */
function contextText(app: App, key: string): string | undefined {
  const v: unknown = app.node.tryGetContext(key);
  if (!v) return undefined;
  return typeof v === 'string' ? v : Array.isArray(v) ? v.join(',') : JSON.stringify(v);
}

/**
 * Every pool's node config as `validate` derives it (model/cluster/derive.ts): a template that does not render, or a
 * rendered config its format's checks refuse (a NodeConfig or Bottlerocket setting the node agent does not know, a user
 * data over 16 KB, an image family that does not read it), stops synthesis with validate's messages.
 */
function renderedOrThrow(
  cluster: WorkerCluster,
  file: string,
  templatesDir: string,
): ReadonlyMap<string, RenderedConfig> {
  const r = renderCluster(cluster, file, templateDirectory(templatesDir));
  if ('problems' in r) throw new RenderError(r.problems);
  return r.configs;
}
