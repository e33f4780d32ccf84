import { ChannelPins } from '../../lib/engines/channels';
import { KeptSyntheses } from '../../lib/engines/synthesis/kept-syntheses';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { WorkerCluster } from '../../lib/model/cluster/schema/schema';
import { renderConfig } from '../../lib/model/cloudconfig/render';
import { ReconcilerDeps, Synthesizer, TASK } from '../../lib/engines/reconciler/workflow/context';
import { Logger } from '../../lib/core/logger';
import { Outcome } from '../../lib/engines/reconciler/workflow/outcomes';
import { Controller } from '../../lib/engines/reconciler/runtime/controller';
import { DerivedCache } from '../../lib/model/cluster/derived-cache';
import { assemblyDir } from '../../lib/engines/synthesis/assembly-dir';
import { CrashSignal } from '../../lib/engines/reconciler/compose/workflow';
import { after, Hook } from '../../lib/engines/reconciler/workflow/task';
import { FilePolicySource, POLICY_DIR } from '../../lib/engines/rollout/policy-source';
import { configBucketName, configKeyPrefix, workerStackName } from '../../lib/core/naming';
import { complete, FakeCloudFormation, FakeCloudFormationProps } from './fake-cloudformation';
import { Harness } from './harness';
import { DEFAULT_CLOUDFORMATION_RATES, RequestRateLimiter, RequestRates } from '../../lib/platform/aws/request-rate';
import { DEFAULT_TEMPLATES_DIR, templateDirectory } from '../../lib/platform/files/template-directory';

/**
 * A small stand-in for the CDK synthesis, for fleet-scale tests of the rollout only: a template whose launch
 * template carries the config checksum and whose ConfigChecksum output reports it, and the config object as the
 * asset. Synthesis itself is tested with the real CDK elsewhere; a 100-cluster rollout would otherwise spend its
 * time in CDK, not in the decisions under test.
 */
export const checksumSynthesizer: Synthesizer = async (cluster: WorkerCluster, opts) => {
  const config = opts.config ?? renderConfig(cluster, templateDirectory(opts.templatesDir));
  const name = cluster.metadata.name;
  const dir = assemblyDir(opts.workDir, name);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${config.checksum}.${config.extension}`);
  fs.writeFileSync(file, config.bytes);
  const template = {
    Resources: {
      LaunchTemplate: {
        Type: 'AWS::EC2::LaunchTemplate',
        Properties: { LaunchTemplateData: { UserData: config.checksum, ImageId: cluster.spec.pool!.machineImage } },
      },
      Group: {
        Type: 'AWS::AutoScaling::AutoScalingGroup',
        Properties: {
          MinSize: String(cluster.spec.pool!.minSize),
          MaxSize: String(cluster.spec.pool!.maxSize),
          // What the roll key reads (lib/engines/stacks/roll-key.ts): the group's launch template, by reference.
          LaunchTemplate: {
            LaunchTemplateId: { Ref: 'LaunchTemplate' },
            Version: { 'Fn::GetAtt': ['LaunchTemplate', 'LatestVersionNumber'] },
          },
        },
      },
    },
    Outputs: { ConfigChecksum: { Value: config.checksum } },
  };
  return {
    stackName: workerStackName(name),
    templateBody: JSON.stringify(template),
    assets: [
      {
        sourcePath: file,
        bucketName: configBucketName(cluster.spec.account, cluster.spec.region),
        objectKey: `${configKeyPrefix(name)}${config.checksum}.${config.extension}`,
      },
    ],
    durationMs: 0,
  };
};

/** The daemon's log, each policy event stamped with the fake clock's time (`simAt`): when the daemon said it. */
function clocked(log: Logger, now: () => number): Logger {
  const stamp = (obj: object) => ('event' in obj && 'policy' in obj ? { ...obj, simAt: now() } : obj);
  return {
    info: (obj, msg) => log.info(stamp(obj), msg),
    warn: (obj, msg) => log.warn(stamp(obj), msg),
    error: (obj, msg) => log.error(stamp(obj), msg),
    child: (bindings) => clocked(log.child(bindings), now),
  };
}

export interface RollStart {
  readonly name: string;
  readonly at: number;
  readonly checksum: string;
}

const MINUTE = 60_000;
/** A worker group's rolling update: about ten minutes (120 polls of 5 s). */
export const ROLL_POLLS = 120;

/**
 * The daemon's scheduling, on the fake clock (a stack in progress is looked at every 30 s, as `--poll-seconds 30`): each cluster is reconciled when its requeue is due (as the work
 * queue does), every cluster on a resync every 10 minutes and after an edit (the watch). `restart()` drops the
 * controller and builds a new one with fresh deps (a new process: nothing in memory survives), which starts with
 * a full pass, as runDaemon does.
 */
export interface FleetSimOptions {
  /** Clusters are spread over these regions, one fake CloudFormation each. @default the example's (us-east-1) */
  readonly regions?: readonly string[];
  /** Rate quotas and call latency of every region's fake (the bench). @default none */
  readonly quotas?: FakeCloudFormationProps['quotas'];
  readonly latencyMs?: number;
  /** How often a stack in progress is looked at (the daemon's --poll-seconds). @default 30 s */
  readonly pollMs?: number;
  /** Reconciler workers (`--workers`) and stacks in progress (`--concurrency`). @default 4 and 100 */
  readonly workers?: number;
  readonly concurrency?: number;
  /** Where the harness's directory (objects, status files, assets) goes. @default os.tmpdir() */
  readonly tmpDir?: string;
  /**
   * The daemon's client-side request rates per region (its RequestRateLimiter, one per region and process, as the
   * SDK wiring makes them); false: requests go out unpaced. @default the shipped rates when `quotas` are set, else none
   */
  readonly clientRates?: RequestRates | false;
  /**
   * The image channels of each process (a new one per restart: nothing in memory survives, the channels' status files
   * do), refreshed at the start of every pass as the daemon's are. @default none
   */
  readonly channels?: (now: () => Date, clustersDir: string) => ChannelPins;
}

export class FleetSim {
  public readonly h: Harness;
  /** One fake CloudFormation per region (the harness's own for the first). */
  public readonly fakes = new Map<string, FakeCloudFormation>();
  private readonly regionOf = new Map<string, string>();
  public readonly templatesDir: string;
  public readonly starts: RollStart[] = [];
  public readonly outcomes = new Map<string, Outcome>();
  public controller!: Controller;
  public deps!: ReconcilerDeps;
  private readonly due = new Map<string, number>();
  /** Each name's position in names (the order clusters due at the same time are reconciled in). */
  private readonly order: ReadonlyMap<string, number>;
  private nextResync = 0;
  /** This process's image channels, and whether a pass is due to read them (a resync, a new process). */
  private pins?: ChannelPins;
  private channelsDue = false;
  public reconciles = 0;
  /** Processes started after the first (a restart, or a crash a hook threw). */
  public restarts = -1;
  /** Extra workflow hooks of the next process (tests that crash on purpose). */
  public hooks: Hook[] = [];
  /** The daemon's wake-ups of held clusters (Controller.onWake); off, held clusters wait for their recheck. @default on */
  public wakeUps = true;
  private stopWake?: () => void;
  /** This process's request limiters, per region (a restart makes new ones, empty: nothing in memory survives). */
  public limiters = new Map<string, RequestRateLimiter>();

  constructor(
    public readonly names: readonly string[],
    labels: (name: string) => Record<string, string>,
    private readonly opts: FleetSimOptions = {},
  ) {
    this.h = new Harness({ clusters: [], tmpDir: opts.tmpDir });
    this.order = new Map(names.map((n, i) => [n, i]));
    this.templatesDir = path.join(this.h.dir, 'cloudconfig');
    fs.cpSync(DEFAULT_TEMPLATES_DIR, this.templatesDir, { recursive: true });
    const regions = opts.regions ?? ['us-east-1'];
    names.forEach((n, i) => {
      const region = regions[i % regions.length];
      this.regionOf.set(n, region);
      this.h.addCluster(n, (raw) => {
        raw.metadata.labels = labels(n);
        if (region !== raw.spec.region) {
          const from = raw.spec.region as string;
          raw.spec.region = region;
          raw.spec.network.availabilityZones = (raw.spec.network.availabilityZones as string[]).map((z) =>
            z.replace(from, region),
          );
          raw.spec.cloudConfig.values.bootstrapTokenSecretArn = String(
            raw.spec.cloudConfig.values.bootstrapTokenSecretArn,
          ).replace(from, region);
        }
      });
      this.cfn(n).setDefault(this.h.stackName(n), complete(ROLL_POLLS));
    });
    this.restart();
  }

  /** The fake CloudFormation of a cluster's region. */
  public cfn(name: string): FakeCloudFormation {
    const region = this.regionOf.get(name) ?? 'us-east-1';
    let f = this.fakes.get(region);
    if (!f) {
      f =
        this.fakes.size === 0 && !this.opts.quotas && !this.opts.latencyMs
          ? this.h.cfn
          : new FakeCloudFormation({
              clock: this.h.clock,
              region,
              readTemplateUrl: this.h.publisher.read,
              quotas: this.opts.quotas,
              latencyMs: this.opts.latencyMs,
              pace: this.pacing(region),
            });
      this.fakes.set(region, f);
    }
    return f;
  }

  /** The daemon's pacing of its requests to a region's CloudFormation (see FleetSimOptions.clientRates). */
  private pacing(region: string): ((api: string) => number) | undefined {
    const rates = this.opts.clientRates ?? (this.opts.quotas ? DEFAULT_CLOUDFORMATION_RATES : false);
    if (!rates) return undefined;
    return (api) => {
      let l = this.limiters.get(region);
      if (!l) {
        l = new RequestRateLimiter({ rates, now: () => this.now });
        this.limiters.set(region, l);
      }
      return l.reserve(api);
    };
  }

  /** Lets clock time pass (every region's operations end as their time comes). */
  public advance(ms: number): void {
    const fakes = [...new Set([...this.fakes.values()])];
    const until = this.now + ms;
    // The first fake moves the clock in poll steps; the others end their operations at each step.
    while (this.now < until) {
      fakes[0].advance(Math.min(5000, until - this.now));
      for (const f of fakes.slice(1)) f.advance(0);
    }
  }

  public get now(): number {
    return this.h.clock.ms;
  }

  /** Syntheses run since the fleet was made (the roll-key task's and the synthesize task's alike). */
  public syntheses = 0;

  public writePolicy(name: string, spec: Record<string, unknown>): void {
    fs.mkdirSync(path.join(this.h.clustersDir, POLICY_DIR), { recursive: true });
    fs.writeFileSync(
      path.join(this.h.clustersDir, POLICY_DIR, `${name}.yaml`),
      stringify({ apiVersion: 'worker-stacks.io/v1alpha1', kind: 'WorkerRolloutPolicy', metadata: { name }, spec }),
    );
  }

  /** A change to the shared config template: every cluster's checksum changes. */
  public changeTemplate(line: string): void {
    fs.appendFileSync(path.join(this.templatesDir, '_shared', 'kubelet.env.hbs'), `${line}\n`);
    // As the daemon's template watch does.
    this.controller.refreshTemplates();
    this.wakeAll();
  }

  public restart(): void {
    const base = this.h.deps({
      templatesDir: this.templatesDir,
      // Counted: a held cluster's roll key synthesizes once, and its change set reuses it when released, as the daemon's
      // kept syntheses do (bench/fleet-rollout.ts).
      synthesizer: async (cluster, o) => (this.syntheses++, checksumSynthesizer(cluster, o)),
      kept: new KeptSyntheses(),
      derived: new DerivedCache(),
      pollMs: this.opts.pollMs ?? 30_000,
      maxUpdateAttempts: 2,
      backoff: { baseMs: 5 * MINUTE, maxMs: 30 * MINUTE, random: () => 0.5 },
    });
    const regionName = new Map([...this.regionOf].map(([n, r]) => [r, n]));
    this.deps = {
      ...base,
      log: clocked(base.log, () => this.now),
      aws: (region) => ({ cfn: this.cfn(regionName.get(region) ?? ''), publisher: this.h.publisher }),
    };
    this.restarts++;
    this.limiters = new Map();
    const hooks = [
      after(
        TASK.execute,
        (ctx, _task, found) =>
          void this.starts.push({ name: ctx.record.name, at: this.now, checksum: found.config!.checksum }),
      ),
      ...this.hooks,
    ];
    this.stopWake?.();
    this.controller = new Controller(this.deps, {
      concurrency: this.opts.concurrency ?? 100,
      workers: this.opts.workers ?? 4,
      hooks,
      policies: new FilePolicySource({ clustersDir: this.h.clustersDir }),
      channels: (this.pins = this.opts.channels?.(() => new Date(this.now), this.h.clustersDir)),
    });
    this.channelsDue = true;
    // As runDaemon does: the clusters the wave watch wakes are looked at now (unless the test turns it off).
    this.stopWake = this.wakeUps
      ? this.controller.onWake((names) =>
          names.forEach((n) => this.due.set(n, Math.min(this.due.get(n) ?? Infinity, this.now))),
        )
      : undefined;
    this.wakeAll();
  }

  /** The watch saw an edit (or a new process starts): every cluster is looked at now. */
  public wakeAll(): void {
    for (const n of this.names) this.due.set(n, this.now);
  }

  /** Runs the daemon's loop until `until` (clock ms) or `stop()` says so. */
  public async runUntil(until: number, stop: () => boolean = () => false): Promise<void> {
    for (;;) {
      if (stop()) return;
      let next = this.nextResync;
      this.due.forEach((at) => (next = Math.min(next, at)));
      if (next > until) {
        if (until > this.now) this.advance(until - this.now);
        return;
      }
      if (next > this.now) this.advance(next - this.now);
      if (this.now >= this.nextResync) {
        this.wakeAll();
        this.nextResync = this.now + 10 * MINUTE;
        this.channelsDue = true;
      }
      // As the daemon's pass does before it reconciles anything (PassBook.start): the channels are read, once.
      if (this.channelsDue && this.pins) {
        this.channelsDue = false;
        await this.pins.refresh(await this.deps.store.list());
      }
      // The clusters due now, in the order of names (one look at the due map: no array per entry, per name, per turn).
      const dueNow: string[] = [];
      this.due.forEach((at, x) => {
        if (at <= this.now && this.order.has(x)) dueNow.push(x);
      });
      dueNow.sort((a, b) => this.order.get(a)! - this.order.get(b)!);
      for (const n of dueNow) {
        this.due.delete(n);
        let o: Outcome | undefined;
        try {
          o = await this.controller.reconcileKey(n);
        } catch (e) {
          if (!(e instanceof CrashSignal)) throw e;
          // The process died mid-reconcile: a new one starts, with nothing of the old one's memory.
          this.hooks = [];
          this.restart();
          break;
        }
        this.reconciles++;
        // Each reconcile is its own turn of the event loop, as the daemon's work queue runs them (timers run between).
        await new Promise((r) => setImmediate(r));
        if (!o) continue;
        this.outcomes.set(n, o);
        if (o.requeueAfterMs !== undefined) this.due.set(n, this.now + Math.max(1000, o.requeueAfterMs));
      }
    }
  }

  public async runFor(ms: number): Promise<void> {
    await this.runUntil(this.now + ms);
  }

  /** The live checksum of a cluster's stack. */
  public live(name: string): string | undefined {
    return this.cfn(name).peek(this.h.stackName(name))?.outputs.ConfigChecksum;
  }

  /** The stack of a cluster as DescribeStacks would show it (no call counted). */
  public stack(name: string) {
    return this.cfn(name).peek(this.h.stackName(name));
  }

  /** The policy events of the daemon's JSON log, in order: `at reason wave`. */
  public policyEvents(): Array<{ at: number; reason: string; wave?: string; type: string; message?: string }> {
    return this.h.log.entries
      .filter((e) => typeof (e.obj as { event?: unknown }).event === 'string' && 'policy' in e.obj)
      .map((e) => {
        const o = e.obj as { event: string; wave?: string; type: string; simAt?: number };
        return { at: o.simAt ?? NaN, reason: o.event, wave: o.wave, type: o.type, message: e.msg };
      });
  }

  public cleanup(): void {
    this.stopWake?.();
    this.h.cleanup();
  }
}
