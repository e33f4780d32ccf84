import * as fs from 'node:fs';
import { loadClusters } from '../../platform/files/load-clusters';
import { synthesisProblems } from '../../engines/synthesis';
import { formatProblem, Problem } from '../../core/errors';
import { FilePolicySource, policyOverlapProblems } from '../../engines/rollout';
import { DEFAULT_STACK_LIMIT, plannedStacks, stackQuotaWarnings } from '../../model/cluster/pools/stack-quota';
import { WorkerCluster } from '../../model/cluster/schema/schema';
import { describeAwsError } from '../../platform/aws/aws-error';
import { awsClients } from '../../platform/aws/clients';
import { SdkCloudFormation } from '../../platform/aws/sdk-cloudformation';
import { EXIT, InputDirs, Io, loadOptions } from './context';
import { loadObjects } from './validate-objects';

export interface ValidateOptions {
  /** `text` (one line per problem) or `json`, as -o gave it: anything else is a usage error (exit 2). @default 'text' */
  readonly output?: string;
  /**
   * CloudFormation's stack quota per account and region, as --stack-limit gave it (a whole number ≥ 1; anything else
   * is a usage error). @default 2000, AWS's default
   */
  readonly stackLimit?: string;
  /**
   * Read each region's quota from CloudFormation (DescribeAccountLimits StackLimit) with the usual credential chain,
   * instead of --stack-limit (which stays the fallback of a region it cannot read). @default false: validate is offline
   */
  readonly liveStackLimit?: boolean;
  /**
   * Check the custom resources in this file (`-`: stdin), as `kubectl get workerclusters -A -o yaml` prints them,
   * instead of the cluster directory: an upgrade is checked against the live objects first. @default the directory
   */
  readonly objects?: string;
  /** Reads one region's stack quota. @default DescribeAccountLimits through the AWS SDK */
  readonly readStackLimit?: (region: string) => Promise<number | undefined>;
}

/** DescribeAccountLimits in `region`, with the usual credential chain (the account those credentials are of). */
function sdkStackLimit(region: string): Promise<number | undefined> {
  return new SdkCloudFormation({ client: awsClients({ region, maxAttempts: 3 }).cloudFormation }).stackLimit();
}

/**
 * The warnings of the fleet's stack quota (lib/model/cluster/pools/stack-quota.ts): a region at 80 % of its limit is warned
 * about, never refused. A live limit that cannot be read is said, and the flag's (or AWS's default) is used.
 */
async function quotaWarnings(
  clusters: readonly WorkerCluster[],
  limit: number,
  opts: ValidateOptions,
): Promise<string[]> {
  const planned = plannedStacks(clusters);
  const notes: string[] = [];
  const live = new Map<string, number>();
  if (opts.liveStackLimit) {
    const read = opts.readStackLimit ?? sdkStackLimit;
    for (const region of [...new Set(planned.map((p) => p.region))]) {
      try {
        const found = await read(region);
        if (found !== undefined) live.set(region, found);
        else notes.push(`region ${region}: CloudFormation did not say its StackLimit; counted against ${limit}`);
      } catch (e) {
        notes.push(
          `region ${region}: could not read the stack limit (${describeAwsError(e) ?? (e as Error).message}); counted against ${limit}`,
        );
      }
    }
  }
  const fallback = opts.stackLimit === undefined ? 'the AWS default' : '--stack-limit';
  const warnings = stackQuotaWarnings(planned, (_account, region) => {
    const found = live.get(region);
    return found === undefined ? { limit, source: fallback } : { limit: found, source: 'DescribeAccountLimits' };
  });
  return [...notes, ...warnings.map((w) => w.message)];
}

/**
 * `worker-stacks validate`: checks every cluster object, reports every problem, touches nothing. Each object that
 * passes the schema is then rendered and synthesized with cdk-nag, as `cdk synth` does (WORKER_STACKS_NAG=false
 * turns nag off for both), so whatever synthesis refuses, validate refuses first, naming the field. It also warns (exit
 * 0) when an account/region's planned stacks reach 80 % of CloudFormation's stack quota (offline: --stack-limit, or AWS's
 * default 2000; --live-stack-limit reads it).
 */
export async function validateCommand(dirs: InputDirs, io: Io, opts: ValidateOptions = {}): Promise<number> {
  const output = opts.output ?? 'text';
  if (output !== 'text' && output !== 'json') {
    io.err(`error: unknown output format ${JSON.stringify(output)}\n  fix: pass -o text or -o json\n`);
    return EXIT.usage;
  }
  const limit = opts.stackLimit === undefined ? DEFAULT_STACK_LIMIT : Number(opts.stackLimit);
  if (!Number.isSafeInteger(limit) || limit < 1) {
    io.err(
      `error: --stack-limit ${JSON.stringify(opts.stackLimit)} is not a stack count\n  fix: pass the account's CloudFormation stack quota per region as a whole number, such as 2000\n`,
    );
    return EXIT.usage;
  }
  if (opts.objects === undefined && !fs.existsSync(dirs.clustersDir)) {
    io.err(
      `error: cluster directory ${dirs.clustersDir} does not exist\n  fix: run from the repository root or pass --clusters <dir>\n`,
    );
    return EXIT.usage;
  }
  if (opts.objects === undefined && !fs.statSync(dirs.clustersDir).isDirectory()) {
    io.err(
      `error: ${dirs.clustersDir} is not a directory\n  fix: pass the directory that holds the cluster files to --clusters <dir>\n`,
    );
    return EXIT.usage;
  }
  // One read of the templates and the image channels for the objects and the channel problems alike.
  const options = loadOptions(dirs);
  const loaded =
    opts.objects === undefined ? loadClusters(dirs.clustersDir, options) : loadObjects(opts.objects, options.templates);
  // Rollout policies beside the objects: the daemon starts no roll while one is invalid, so validate refuses them too.
  const policies =
    opts.objects === undefined
      ? new FilePolicySource({ clustersDir: dirs.clustersDir }).loadSync()
      : { policies: [], problems: [] };
  // Image channels beside the objects: one that does not validate holds the pools that name it, so validate refuses it.
  const channelProblems = opts.objects === undefined ? options.channelProblems : [];
  const problems: Problem[] = [
    ...loaded.problems,
    ...policies.problems,
    ...channelProblems,
    ...policyOverlapProblems(
      policies.policies,
      loaded.clusters.map((c) => ({ name: c.cluster.metadata.name, labels: c.cluster.metadata.labels ?? {} })),
    ),
  ];
  const nag = process.env.WORKER_STACKS_NAG !== 'false';
  const clusters = loaded.clusters.filter((c) => {
    const found = synthesisProblems(c.cluster, c.file, { templatesDir: dirs.templatesDir, nag });
    problems.push(...found);
    return found.length === 0;
  });
  // Every object that is a cluster counts toward its account's stacks, whether or not synthesis took it.
  const warnings = await quotaWarnings(
    loaded.clusters.map((c) => c.cluster),
    limit,
    opts,
  );
  if (output === 'json') {
    const report = { valid: clusters.map((c) => c.file), problems, ...(warnings.length ? { warnings } : {}) };
    io.out(JSON.stringify(report, undefined, 2) + '\n');
  } else {
    for (const p of problems) io.err(`${formatProblem(p)}\n`);
    for (const w of warnings) io.err(`warning: ${w}\n`);
    const bad = new Set(problems.map((p) => p.file)).size;
    io.out(
      `${clusters.length} cluster object${clusters.length === 1 ? '' : 's'} valid${bad ? `, ${bad} invalid` : ''}\n`,
    );
  }
  return problems.length ? EXIT.invalid : EXIT.ok;
}
