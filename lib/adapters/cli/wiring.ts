import { KeptSyntheses, SynthPool } from '../../engines/synthesis';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { S3ConfigObjects } from '../../platform/aws/config-objects';
import pino from 'pino';
import { awsClients } from '../../platform/aws/clients';
import {
  DEFAULT_CLOUDFORMATION_RATES,
  processPacing,
  RequestRateLimiter,
  RequestRates,
} from '../../platform/aws/request-rate';
import { STSClient } from '@aws-sdk/client-sts';
import { DeployerCredentials } from '../../platform/aws/assume-role';
import { DeployerIdentity, StsIdentity } from '../../platform/aws/identity';
import { executionRoleName, roleArn } from '../../core/naming';
import { S3Publisher } from '../../platform/aws/s3-publisher';
import { SdkCloudFormation } from '../../platform/aws/sdk-cloudformation';
import { UsageError } from '../../core/errors';
import { ClusterStore } from '../../model/ports/cluster-store';
import { createStore, fileStore, StoreOptions } from '../stores/registry';
import {
  DEFAULT_BACKOFF,
  DEFAULT_MAX_UPDATE_ATTEMPTS,
  DEFAULT_POLL_MS,
  DriftPolicy,
  ReconcilerDeps,
  RegionClients,
  codeVersion,
  codeFingerprint,
} from '../../engines/reconciler';
import { DerivedCache } from '../../model/cluster/derived-cache';
import { Logger } from '../../core/logger';

export interface WiringOptions {
  readonly clustersDir: string;
  /** @default <clustersDir>/.status */
  readonly stateDir?: string;
  readonly templatesDir: string;
  readonly dryRun?: boolean;
  readonly s3ForcePathStyle?: boolean;
  /** @default 30 min */
  readonly waitTimeoutMs?: number;
  /** @default 10 min */
  readonly changeSetTimeoutMs?: number;
  /** Seconds between CloudFormation polls while waiting. @default 5 */
  readonly pollSeconds?: number;
  /** @default true */
  readonly nag?: boolean;
  /** Where JSON log lines go. @default stderr */
  readonly logDestination?: NodeJS.WritableStream;
  readonly logLevel?: string;
  /** Aborted on shutdown: waits stop and requeue. @default never */
  readonly signal?: AbortSignal;
  /** Synthesize in these worker threads. @default in the reconciler's own thread */
  readonly synthPool?: SynthPool;
  /** Executions of the same failing inputs before the cluster stalls. @default 2 */
  readonly maxUpdateAttempts?: number;
  /** @default repair */
  readonly drift?: DriftPolicy;
  /** Which store (--store and its flags). @default the file store on clustersDir */
  readonly store?: StoreOptions;
  /**
   * Assume each cluster's account's deployer role for its calls (`--role-name`, `--external-id`); false is the
   * single-credential mode (`--no-assume-role`): every call with the usual credential chain. @default assume, default names
   */
  readonly assumeRole?: AssumeRoleWiring | false;
  /**
   * The most CloudFormation requests a second this process sends per account and region, per API (`--cfn-read-qps`,
   * `--cfn-write-qps`). @default DEFAULT_CLOUDFORMATION_RATES
   */
  readonly cloudFormationRates?: RequestRates;
}

export interface AssumeRoleWiring {
  /** @default worker-stacks-deployer */
  readonly roleName?: string;
  readonly externalId?: string;
  /** Names this process in the session name. @default worker-stacks-<hostname> */
  readonly daemon?: string;
}

export function createLogger(dest: NodeJS.WritableStream = process.stderr, level = 'info'): Logger {
  return pino(
    { level, base: { app: 'worker-stacks' }, timestamp: pino.stdTimeFunctions.isoTime },
    dest as pino.DestinationStream,
  );
}

/** Wires the real parts: the file store, the AWS SDK (usual credential chain, AWS_ENDPOINT_URL*), pino. */
export function createDeps(opts: WiringOptions): { deps: ReconcilerDeps; store: ClusterStore; closeStore: () => void } {
  const log = createLogger(opts.logDestination, opts.logLevel);
  // The store's watch logs its failures with the daemon's logger.
  const opened = createStore(opts.store ?? fileStore(opts.clustersDir, opts.stateDir), { log });
  const synthPool = opts.synthPool;
  const store = opened.store;
  const sets = new Map<string, RegionClients & { readonly sts: STSClient }>();
  const poll = opts.pollSeconds ?? DEFAULT_POLL_MS / 1000;
  const stsRegion = process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const own = new StsIdentity(awsClients({ region: stsRegion }).sts);
  const assume = opts.assumeRole === false ? undefined : (opts.assumeRole ?? {});
  const managementSts = new Map<string, STSClient>();
  const deployer = assume
    ? new DeployerCredentials({
        roleName: assume.roleName,
        externalId: assume.externalId,
        daemon: assume.daemon,
        sts: (region) => {
          const made = managementSts.get(region) ?? awsClients({ region }).sts;
          managementSts.set(region, made);
          return made;
        },
      })
    : undefined;
  // One client set per account and region (per region alone in single-credential mode), made once and reused.
  const clientsFor = (region: string, account?: string) => {
    const key = deployer && account ? `${account}/${region}` : region;
    let c = sets.get(key);
    if (!c) {
      const clients = awsClients({
        region,
        s3ForcePathStyle: opts.s3ForcePathStyle,
        // AWS's request quotas are per account and region: so is the limiter (one per client set).
        cloudFormationRate: new RequestRateLimiter({
          rates: opts.cloudFormationRates ?? DEFAULT_CLOUDFORMATION_RATES,
          ledger: processPacing,
        }),
        ...(deployer && account
          ? {
              credentials: deployer.provider(account, region),
              onExpiredSession: () => deployer.invalidate(account, region),
            }
          : {}),
      });
      c = {
        cfn: new SdkCloudFormation({
          client: clients.cloudFormation,
          waiterDelaySeconds: { min: poll, max: Math.max(poll, 30) },
          eventPollMs: poll * 1000,
          roleArn: deployer && account ? roleArn(account, region, executionRoleName(region)) : undefined,
        }),
        publisher: new S3Publisher(clients.s3, region),
        configObjects: new S3ConfigObjects(clients.s3),
        sts: clients.sts,
      };
      sets.set(key, c);
    }
    return c;
  };
  const aws = (region: string, account?: string): RegionClients => clientsFor(region, account);
  const deps: ReconcilerDeps = {
    store,
    aws,
    identity: deployer ? new DeployerIdentity((account, region) => clientsFor(region, account).sts, own) : own,
    templatesDir: opts.templatesDir,
    workDir: processWorkDir(),
    code: codeFingerprint(),
    release: codeVersion().version,
    log,
    now: () => new Date(),
    backoff: retryBackoff(),
    changeSetTimeoutMs: opts.changeSetTimeoutMs ?? 10 * 60_000,
    dryRun: opts.dryRun ?? false,
    nag: opts.nag ?? true,
    maxRecoveryAttempts: 3,
    maxUpdateAttempts: opts.maxUpdateAttempts ?? DEFAULT_MAX_UPDATE_ATTEMPTS,
    drift: opts.drift ?? 'repair',
    pollMs: poll * 1000,
    derived: new DerivedCache(),
    // A store that can put events on its objects (its provider's events capability) gets them.
    events: opened.events,
    synthesizer: synthPool ? (cluster, o) => synthPool.synthesize(cluster, o) : undefined,
    kept: new KeptSyntheses(),
  };
  return {
    deps,
    store,
    closeStore: () => {
      opened.close();
    },
  };
}

let workDir: string | undefined;

/**
 * This process's own directory for cloud assemblies: two reconcilers (or a
 * reconciler and a `bootstrap`) on one machine never synthesize into the same
 * place. Removed when the process exits. Assemblies are scratch (each is
 * removed once published), so they go to memory when the machine has a tmpfs
 * at /dev/shm: on this project's test machine, writing and removing them on
 * disk was about a sixth of each synthesis (the same fleet synthesized into
 * /tmp and /dev/shm in turn). WORKER_STACKS_WORK_DIR chooses another parent.
 */
function processWorkDir(): string {
  if (!workDir) {
    const dir = createWorkDir(workDirParent());
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    workDir = dir;
  }
  return workDir;
}

/**
 * A fresh work dir named after this process. Dirs of processes of the same user that are gone (killed before their
 * exit handler ran) are removed first: /dev/shm is memory, and nothing else cleans it before a reboot.
 */
export function createWorkDir(
  parent: string,
  pid = process.pid,
  uid: number | string = process.getuid?.() ?? 'u',
): string {
  const prefix = `worker-stacks-${uid}-`;
  for (const name of safeReaddir(parent)) {
    const owner = new RegExp(`^${prefix}(\\d+)-`).exec(name)?.[1];
    if (!owner || Number(owner) === pid || isAlive(Number(owner))) continue;
    try {
      fs.rmSync(path.join(parent, name), { recursive: true, force: true });
    } catch {
      // not ours to remove after all: left as it is
    }
  }
  return fs.mkdtempSync(path.join(parent, `${prefix}${pid}-`));
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, as another user's process.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function workDirParent(env: NodeJS.ProcessEnv = process.env, shm = '/dev/shm'): string {
  const chosen = env.WORKER_STACKS_WORK_DIR;
  if (chosen) {
    if (!isWritableDir(chosen)) {
      throw new UsageError(`WORKER_STACKS_WORK_DIR=${chosen}: not a writable directory`, {
        hint: 'create it (and let this user write to it), or unset the variable to use /dev/shm or the temp dir',
      });
    }
    return chosen;
  }
  // No /dev/shm (macOS, some containers): the usual temp dir.
  return isWritableDir(shm) ? shm : os.tmpdir();
}

function isWritableDir(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/**
 * DEFAULT_BACKOFF. WORKER_STACKS_RETRY_BASE_MS, a test seam (not a setting: no flag, no docs), brings the first retry
 * after a failed update sooner: the integration tests against moto (test/integration/harness.ts) retry a rolled-back
 * update after a second instead of 24-36 s of idle wall time, with the same exponent, cap and jitter.
 */
function retryBackoff(): typeof DEFAULT_BACKOFF {
  const baseMs = Number(process.env.WORKER_STACKS_RETRY_BASE_MS);
  return Number.isFinite(baseMs) && baseMs > 0 ? { ...DEFAULT_BACKOFF, baseMs } : DEFAULT_BACKOFF;
}
