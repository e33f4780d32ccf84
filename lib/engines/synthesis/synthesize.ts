import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { FileAsset, fileAssetsOf } from '../../platform/aws/s3-publisher';
import { WorkerCluster } from '../../model/cluster/schema/schema';
import { RenderedConfig } from '../../model/cloudconfig/render';
import { SynthesisError, UsageError, WorkerStacksError } from '../../core/errors';
import { stackUnits } from '../../model/cluster/pools/pools';
import { App } from 'aws-cdk-lib';
import { addAwsSolutionsChecks } from '../stacks/nag';
import { buildFleetApp } from '../stacks/app';
import { captureOutput, formatFindings, isPolicyReport, nagFindings, SynthesisFindingsError } from './synth-findings';
import { DeployerTrust } from '../stacks/bootstrap-roles';
import { BootstrapStack } from '../stacks/bootstrap-stack';
import { BOOTSTRAP_STACK_NAME, workerStackName } from '../../core/naming';
import { assemblyDir, assemblyKey, removeAssembly } from './assembly-dir';

/** CloudFormation's limit for an inline TemplateBody; larger templates go through S3. */
export const TEMPLATE_BODY_LIMIT = 51_200;

export interface SynthesizedStack {
  readonly stackName: string;
  readonly templateBody: string;
  /** The config object (and the template itself when it is too large to send inline). */
  readonly assets: FileAsset[];
  /** Set when the template must be read from S3. */
  readonly templateAsset?: FileAsset;
  /** How long the synthesis took in its own thread (no queueing), ms: logged, and measured by bench/. */
  readonly durationMs: number;
  /** What aws-cdk-lib wrote to the console while synthesizing (captured, never printed), one line each. @default none */
  readonly output?: readonly string[];
}

export interface SynthesizeOptions {
  readonly templatesDir: string;
  /** Directory for cloud assemblies; one subdirectory per cluster and inputs. */
  readonly workDir: string;
  /** Cache key: the inputs fingerprint. */
  readonly fingerprint: string;
  /** Run cdk-nag, as `cdk synth` does. @default true */
  readonly nag?: boolean;
  /**
   * The config of the named stack's pool (the unit's pool: `default` for the shared stack), when the caller has rendered
   * it already; ignored for a shared stack without the pool default. @default rendered here
   */
  readonly config?: RenderedConfig;
  /** The object's file as messages name it (`clusters/prod-eu1.yaml`). @default the cluster's name */
  readonly source?: string;
  /**
   * Which of the cluster's stacks (model/cluster/pools/pools.ts stackUnits: the shared WorkerStack-<cluster>, or a pool's
   * WorkerStack-<cluster>-Pool-<name>). @default WorkerStack-<cluster>
   */
  readonly stackName?: string;
}

/**
 * Synthesizes one of a cluster's stacks (`opts.stackName`, by default the shared one) in-process, with exactly the code
 * `cdk synth` runs; only that stack is built (a pool's stack imports the shared values by export name). Its assets are
 * that stack's own: the config object of its pool. Nothing is printed: what
 * aws-cdk-lib would write to the console is captured (the daemon's stdout and stderr carry JSON log lines only), and
 * a cdk-nag refusal becomes a SynthesisFindingsError naming each rule, the object's field and the fix.
 */
export function synthesizeStack(cluster: WorkerCluster, opts: SynthesizeOptions): SynthesizedStack {
  const started = performance.now();
  const stackName = opts.stackName ?? workerStackName(cluster.metadata.name);
  const key = assemblyKey(cluster.metadata.name, stackName);
  if (!stackUnits(cluster).some((u) => u.stackName === stackName)) {
    throw new UsageError(`${cluster.metadata.name} has no stack ${stackName}`, {
      hint: `its stacks are ${stackUnits(cluster)
        .map((u) => u.stackName)
        .join(', ')}`,
    });
  }
  const outdir = path.join(assemblyDir(opts.workDir, key), opts.fingerprint.slice(0, 16));
  // Whatever an earlier caller left (the workflow removes its own; bench and tests may not) goes first.
  removeAssembly(opts.workDir, key);
  const run = captureOutput(() => synthesizeInto(cluster, opts, outdir, stackName, started));
  if (run.result && run.error === undefined)
    return run.output.length ? { ...run.result, output: run.output } : run.result;
  removeAssembly(opts.workDir, key);
  const e = run.error;
  if (e instanceof WorkerStacksError) throw e;
  const source = opts.source ?? cluster.metadata.name;
  if ((opts.nag ?? true) && isPolicyReport(e, run.output)) {
    const findings = nagFindings(cluster, source, opts.templatesDir);
    if (findings.length) {
      throw new SynthesisFindingsError(
        `${source}: ${stackName} did not synthesize: cdk-nag refused it:\n${formatFindings(findings)}`,
        {
          cause: e,
          findings,
          hint: 'change the object as each finding says (`worker-stacks validate` names the same fields); a finding worker-stacks accepts by design is acknowledged with its reason in lib/engines/stacks/nag.ts; the reconciler tries again when the object changes',
        },
      );
    }
  }
  // aws-cdk-lib's report points at a copy in the assembly, which is gone now: the message keeps only the findings.
  const findings = [...(e instanceof Error ? e.message : String(e)).split('\n'), ...run.output]
    .filter((line) => !/A copy of this report can be found in|^Validation failed\.?\s*$/.test(line))
    .join('\n')
    .trim();
  const policy = /Acknowledge with/.test(findings);
  throw new SynthesisError(`${source}: ${stackName} did not synthesize:\n${findings}`, {
    cause: e,
    hint: policy
      ? 'change the cluster object so the finding no longer applies, or acknowledge the rule with its reason in lib/engines/stacks/nag.ts; `npx cdk synth` shows the same report'
      : '`npx cdk synth` with this object reproduces it; it is a failure of the code for this object, not of AWS, and retrying will not help until the object or the code changes',
  });
}

function synthesizeInto(
  cluster: WorkerCluster,
  opts: SynthesizeOptions,
  outdir: string,
  stackName: string,
  started: number,
): SynthesizedStack {
  const fleet = buildFleetApp({
    clusters: [{ file: cluster.metadata.name, cluster }],
    outdir,
    templatesDir: opts.templatesDir,
    nag: opts.nag ?? true,
    bootstrap: false,
    rendered: opts.config ? new Map([[stackName, opts.config]]) : undefined,
    only: new Set([stackName]),
    // Nothing here reads the manifest's logical-id map (the CLI and review do); the template is the same.
    logicalIdMetadata: false,
  });
  const assembly = fleet.app.synth();
  const artifact = assembly.getStackByName(stackName);
  const templateBody = fs.readFileSync(artifact.templateFullPath, 'utf8');
  const all = fileAssetsOf(outdir, artifact.id);
  const isTemplate = (a: FileAsset) => path.resolve(a.sourcePath) === path.resolve(artifact.templateFullPath);
  const templateAsset = Buffer.byteLength(templateBody) > TEMPLATE_BODY_LIMIT ? all.find(isTemplate) : undefined;
  return {
    stackName,
    templateBody,
    assets: all.filter((a) => !isTemplate(a) || a === templateAsset),
    templateAsset,
    durationMs: performance.now() - started,
  };
}

/** The bootstrap stack (the config bucket) of one account and region, synthesized like the worker stacks. */
export function synthesizeBootstrap(
  account: string,
  region: string,
  workDir: string,
  trust?: DeployerTrust,
): SynthesizedStack {
  const started = performance.now();
  const outdir = path.join(workDir, `bootstrap-${account}-${region}`);
  fs.rmSync(outdir, { recursive: true, force: true });
  const app = new App({
    outdir,
    stackTraces: false,
    treeMetadata: false,
    builtinCloudFormationValidation: process.env.CDK_VALIDATION === 'true',
  });
  addAwsSolutionsChecks(app);
  const stack = new BootstrapStack(app, { account, region, trust });
  const artifact = app.synth().getStackArtifact(stack.artifactId);
  const templateBody = fs.readFileSync(artifact.templateFullPath, 'utf8');
  // Nothing is read from the assembly later (no assets), so it goes at once.
  fs.rmSync(outdir, { recursive: true, force: true });
  // The bucket does not exist yet: the template always goes inline (it is small).
  return { stackName: BOOTSTRAP_STACK_NAME, templateBody, assets: [], durationMs: performance.now() - started };
}
