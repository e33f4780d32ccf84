import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { ClusterStatus, Condition, ConditionType, getCondition } from '../../lib/model/cluster/schema/status';
import { ReconcilerDeps } from '../../lib/engines/reconciler/workflow/context';
import { Outcome, OUTCOMES } from '../../lib/engines/reconciler/workflow/outcomes';
import { Controller, ControllerOptions } from '../../lib/engines/reconciler/runtime/controller';
import { reconcileCluster, ReconcileOptions } from '../../lib/engines/reconciler/compose/reconcile-cluster';
import { workerStackName } from '../../lib/core/naming';
import { FileStore } from '../../lib/adapters/stores/file-store';
import { FakeCloudFormation } from './fake-cloudformation';
import { FakeClock, FakePublisher, FixedIdentity, RecordingLogger } from './fake-ports';
import { ownSecret } from '../helpers/clusters';
import { Json } from '../helpers/json';
import { DEFAULT_TEMPLATES_DIR } from '../../lib/platform/files/template-directory';

export const EXAMPLE = 'staging-us1';
export const ACCOUNT = '222222222222';
const EXAMPLE_FILE = path.resolve(__dirname, '..', '..', 'clusters', `${EXAMPLE}.yaml`);

/** What the state file beside a cluster object holds (lib/adapters/stores/file-store.ts). */
export interface StateFile {
  readonly resourceVersion: number;
  readonly generation: number;
  readonly status?: ClusterStatus;
}

export interface HarnessOptions {
  /** Cluster objects to create from staging-us1 (metadata.name and file name changed). @default [staging-us1] */
  readonly clusters?: readonly string[];
  /** The account the credentials belong to. @default 222222222222 (the example's) */
  readonly account?: string;
  /** @default 60 s (12 polls of the fake) */
  readonly waitTimeoutMs?: number;
  /** Where the harness's temporary directory is made (a fleet bench puts it in memory, /dev/shm). @default os.tmpdir() */
  readonly tmpDir?: string;
}

/**
 * Reconciler deps as lib/adapters/cli/wiring.ts builds them, with the fakes in
 * place of AWS, the real FileStore on a temp dir, real synthesis and a clock
 * that the fake CloudFormation moves.
 */
export class Harness {
  public readonly dir: string;
  public readonly clustersDir: string;
  public readonly clock = new FakeClock();
  public readonly publisher = new FakePublisher();
  public readonly cfn = new FakeCloudFormation({ clock: this.clock, readTemplateUrl: this.publisher.read });
  public readonly identity: FixedIdentity;
  public readonly log = new RecordingLogger();
  /** Status writes of every store this harness handed out. */
  public statusWrites = 0;
  private readonly waitTimeoutMs: number;

  constructor(opts: HarnessOptions = {}) {
    this.dir = fs.mkdtempSync(path.join(opts.tmpDir ?? os.tmpdir(), 'ws-reconciler-'));
    this.clustersDir = path.join(this.dir, 'clusters');
    fs.mkdirSync(this.clustersDir);
    for (const name of opts.clusters ?? [EXAMPLE]) this.addCluster(name);
    this.identity = new FixedIdentity(opts.account ?? ACCOUNT);
    this.waitTimeoutMs = opts.waitTimeoutMs ?? 60_000;
  }

  /** Fresh deps with a fresh FileStore (as a restarted process would build them). */
  public deps(overrides: Partial<ReconcilerDeps> = {}): ReconcilerDeps {
    const store = new FileStore({ clustersDir: this.clustersDir, relativeTo: this.dir });
    const write = store.writeStatus.bind(store);
    store.writeStatus = (...args) => {
      this.statusWrites++;
      return write(...args);
    };
    return {
      store,
      aws: () => ({ cfn: this.cfn, publisher: this.publisher }),
      identity: this.identity,
      templatesDir: DEFAULT_TEMPLATES_DIR,
      workDir: path.join(this.dir, 'cdk.out'),
      code: 'test-code',
      log: this.log,
      now: this.clock.now,
      backoff: { baseMs: 1000, maxMs: 60_000, random: () => 0.5 },
      changeSetTimeoutMs: 60_000,
      dryRun: false,
      nag: false,
      maxRecoveryAttempts: 3,
      ...overrides,
    };
  }

  /**
   * Reconciles one cluster as `reconcile --once` would, as a fresh process (no batched listing: it describes its
   * stack): requeued outcomes are reconciled again after the time they asked for (the fake clock moves, and with it
   * the stacks in progress), until one is final or the wait timeout has passed.
   */
  public async reconcile(name = EXAMPLE, opts: ReconcileOptions = {}, deps = this.deps()): Promise<Outcome> {
    const start = this.clock.ms;
    for (let i = 0; ; i++) {
      const outcome = await this.step(name, opts, deps);
      if (outcome.requeueAfterMs === undefined || !OUTCOMES[outcome.result].requeue || i > 500) return outcome;
      if (this.clock.ms - start + outcome.requeueAfterMs > this.waitTimeoutMs) return outcome;
      this.cfn.advance(outcome.requeueAfterMs);
    }
  }

  /** Exactly one reconcile of one cluster. */
  public async step(name = EXAMPLE, opts: ReconcileOptions = {}, deps = this.deps()): Promise<Outcome> {
    const record = await deps.store.get(name);
    if (!record) throw new Error(`no cluster ${name}`);
    return reconcileCluster(record, deps, opts);
  }

  /** Passes of the controller over the fleet until every cluster settles (as `reconcile --once`). */
  public async pass(opts: ControllerOptions = {}, deps = this.deps()) {
    const controller = new Controller(deps, opts);
    const outcomes = await controller.runUntilSettled({
      deadlineMs: this.waitTimeoutMs,
      now: () => this.clock.ms,
      sleep: async (ms) => this.cfn.advance(ms),
    });
    return { outcomes, controller };
  }

  public addCluster(name: string, mutate: (raw: Json) => void = () => undefined): void {
    const raw = parse(fs.readFileSync(EXAMPLE_FILE, 'utf8'));
    raw.metadata.name = name;
    ownSecret(raw);
    mutate(raw);
    fs.writeFileSync(this.objectFile(name), stringify(raw));
  }

  /** Changes a cluster object the way a user would: edit and save its YAML. */
  public edit(name: string, mutate: (raw: Json) => void): void {
    const raw = parse(fs.readFileSync(this.objectFile(name), 'utf8'));
    mutate(raw);
    fs.writeFileSync(this.objectFile(name), stringify(raw));
  }

  public objectFile(name: string): string {
    return path.join(this.clustersDir, `${name}.yaml`);
  }

  public stateFilePath(name = EXAMPLE): string {
    return path.join(this.clustersDir, '.status', `${name}.json`);
  }

  /** The state file as it is on disk now (what a restarted process would read). */
  public state(name = EXAMPLE): StateFile | undefined {
    const p = this.stateFilePath(name);
    return fs.existsSync(p) ? (JSON.parse(fs.readFileSync(p, 'utf8')) as StateFile) : undefined;
  }

  public status(name = EXAMPLE): ClusterStatus {
    const s = this.state(name)?.status;
    if (!s) throw new Error(`no status recorded for ${name}`);
    return s;
  }

  /** What went wrong, if anything: the Stalled condition when it is True, else Degraded. */
  public problem(name = EXAMPLE): Condition | undefined {
    return problem(this.state(name)?.status);
  }

  public condition(type: ConditionType, name = EXAMPLE): Condition | undefined {
    return getCondition(this.state(name)?.status, type);
  }

  public stackName(name = EXAMPLE): string {
    return workerStackName(name);
  }

  public cleanup(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** What went wrong, if anything: the Stalled condition when it is True, else Degraded (the old Failed condition, split). */
export function problem(s: ClusterStatus | undefined): Condition | undefined {
  const stalled = getCondition(s, 'Stalled');
  return stalled?.status === 'True' ? stalled : getCondition(s, 'Degraded');
}

/** The parts of a status that say what is live and for which inputs. */
export function settled(s: ClusterStatus) {
  return {
    cloudConfigChecksum: s.cloudConfigChecksum,
    observedGeneration: s.observedGeneration,
    inputsFingerprint: s.controller?.inputsFingerprint,
    stackStatus: s.stackStatus,
    ready: getCondition(s, 'Ready')?.status,
  };
}

/** A resource failure to script into the fake. */
export const LAUNCH_TEMPLATE_FAILURE = {
  logicalId: 'PoolLaunchTemplate4F481BED',
  resourceType: 'AWS::EC2::LaunchTemplate',
  reason:
    'Resource handler returned message: "The image id \'[ami-1a2b3c4d5e6f70819]\' does not exist" (Service: Ec2, Status Code: 400)',
};
export const ASG_FAILURE = {
  logicalId: 'PoolGroupASG2416841C',
  resourceType: 'AWS::AutoScaling::AutoScalingGroup',
  reason: 'Received 0 SUCCESS signal(s) out of 1. Unable to satisfy 100% MinSuccessfulInstancesPercent requirement',
};
