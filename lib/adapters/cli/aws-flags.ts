import { Command } from 'commander';
import { DEFAULT_CLOUDFORMATION_RATES, ratesFromQps } from '../../platform/aws/request-rate';
import { DirOptions, inputDirs } from './context';
import { requestsPerSecond, wholeNumber } from './numbers';
import { storeOptions } from './store-flags';
import { assumeRoleFrom, AssumeRoleOptions } from './accounts';

/** Flags shared by every command that talks to AWS. */
export function awsFlags(c: Command): Command {
  return c
    .option('--state-dir <dir>', 'where status files are kept (default <clusters>/.status)')
    .option('--s3-force-path-style', 'path-style S3 URLs, for emulators (env WORKER_STACKS_S3_FORCE_PATH_STYLE=true)')
    .option('--poll-seconds <n>', 'seconds between CloudFormation polls while waiting', wholeNumber(1, 3600), 5)
    .option(
      '--wait-timeout-minutes <n>',
      '--once: how long to keep watching stacks in progress before exiting',
      wholeNumber(1, 24 * 60),
      30,
    )
    .option(
      '--max-update-attempts <n>',
      'executions of the same failing inputs before the cluster stalls (until its inputs change or `worker-stacks retry`)',
      wholeNumber(1, 100),
      2,
    )
    .option('--drift <mode>', 'a live stack changed out of band: repair (re-apply the object) or report', 'repair')
    .option(
      '--cfn-read-qps <n>',
      'CloudFormation reads (DescribeStacks, ListStacks, ...) per second per API, account and region that this process sends at most; burst twice that',
      requestsPerSecond(1000),
      DEFAULT_CLOUDFORMATION_RATES.read.ratePerSecond,
    )
    .option(
      '--cfn-write-qps <n>',
      'CloudFormation writes (CreateChangeSet, ExecuteChangeSet, ...) per second per API, account and region, at most; burst twice that',
      requestsPerSecond(1000),
      DEFAULT_CLOUDFORMATION_RATES.write.ratePerSecond,
    );
}

/** The parsed awsFlags. */
export interface AwsOptions {
  /** --state-dir <dir>. @default <clusters>/.status */
  readonly stateDir?: string;
  /** --s3-force-path-style. @default $WORKER_STACKS_S3_FORCE_PATH_STYLE === 'true' */
  readonly s3ForcePathStyle?: boolean;
  /** --poll-seconds <n>. @default 5 */
  readonly pollSeconds: number;
  /** --wait-timeout-minutes <n>. @default 30 */
  readonly waitTimeoutMinutes: number;
  /** --max-update-attempts <n>. @default 2 */
  readonly maxUpdateAttempts: number;
  /** --drift <mode>: repair or report (checked by the command). @default repair */
  readonly drift: string;
  /** --cfn-read-qps <n>. @default 5 */
  readonly cfnReadQps?: number;
  /** --cfn-write-qps <n>. @default 2 */
  readonly cfnWriteQps?: number;
}

/**
 * The flags wiringFrom reads: the directories, AWS and the deployer role, plus the store flags (storeFlags), which
 * it hands to storeOptions as they are.
 */
export interface WiringFlagOptions extends DirOptions, AwsOptions, AssumeRoleOptions {
  /** --dry-run. @default false */
  readonly dryRun?: boolean;
  /** false with --no-nag. @default true */
  readonly nag?: boolean;
  /** --log-level <level>. @default the logger's (info) */
  readonly logLevel?: string;
}

export function wiringFrom(opts: WiringFlagOptions, signal?: AbortSignal) {
  const dirs = inputDirs(opts);
  return {
    clustersDir: dirs.clustersDir,
    templatesDir: dirs.templatesDir,
    stateDir: opts.stateDir,
    s3ForcePathStyle: Boolean(opts.s3ForcePathStyle) || process.env.WORKER_STACKS_S3_FORCE_PATH_STYLE === 'true',
    pollSeconds: opts.pollSeconds,
    waitTimeoutMs: opts.waitTimeoutMinutes * 60_000,
    dryRun: Boolean(opts.dryRun),
    nag: opts.nag !== false,
    maxUpdateAttempts: opts.maxUpdateAttempts,
    drift: opts.drift === 'report' ? ('report' as const) : ('repair' as const),
    logLevel: opts.logLevel,
    signal,
    store: storeOptions(opts, dirs),
    assumeRole: assumeRoleFrom(opts),
    cloudFormationRates: ratesFromQps(
      opts.cfnReadQps ?? DEFAULT_CLOUDFORMATION_RATES.read.ratePerSecond,
      opts.cfnWriteQps ?? DEFAULT_CLOUDFORMATION_RATES.write.ratePerSecond,
    ),
  };
}
