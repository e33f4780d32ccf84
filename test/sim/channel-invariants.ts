import { ChannelStatus } from '../../lib/model/channel/channel-status';
import { clusterRefOf } from '../../lib/model/channel/image-pins';
import { parseDuration } from '../../lib/model/cluster/schema/duration';
import { DEFAULT_POOL } from '../../lib/model/cluster/pools/pools';
import { poolStackName, workerStackName } from '../../lib/core/naming';
import { OperationStart } from '../fakes/fake-cloudformation';
import { CHANNEL, channelRelease, imageOfTemplate, SimChannel } from './sim-channel';
import type { SimWorld } from './sim-world';

/** What the channel invariants need of the others (invariants.ts): the waves, and where a violation goes. */
export interface ChannelJudge {
  /** The policy's wave of a cluster (its index; the remainder after the waves), or undefined: gone, or no policy. */
  waveOf(cluster: string): number | undefined;
  waveName(i: number): string;
  /** The stacks the object asks for now: the shared one, and each pool's own. */
  stacksInObject(cluster: string): string[];
  /** A violation seen (thrown after the step, the first one first). */
  report(message: string): void;
  count(n?: number): void;
}

/**
 * The invariants of a channel world (WorldOptions.channel), judged as each stack operation starts (the fake's onBegin,
 * as `[waves]` is for release()) and as the channel's status is written:
 *
 * - `[channel-waves]`: a stack of a later wave's cluster starts replacing its nodes for channel release r (the image
 *   its update applies is r's, newer than the one it carries) only once every stack of every earlier wave's cluster
 *   whose pool names the channel and that has a live template has carried r (or a newer release) live, for at least
 *   its wave's soak.
 * - `[channel-halts]`: a halted release starts on no stack (a create or update that brings its image) once its halt
 *   is recorded, unless resumed since; and when it is halted, no stack of a later wave than the cluster whose failed
 *   roll halted it has started an update to it (a first create is never held by the waves).
 * - `[channel-pin]`: one release at a time per pool: a stack starts applying a release of the channel only while the
 *   process that starts it pins the stack's cluster to that release (its ChannelPins as last refreshed, or as before
 *   that refresh: a reconcile in hand when it came derived its inputs with those).
 * - liveness (converged() waits for it): the newest release published has been recorded, and a release whose roll
 *   failed on a cluster still on the channel (an update to its image rolled back) since it was last resumed pins it no more.
 */
export class ChannelInvariants {
  /** What they judged: channel rolls forward, of a later wave's cluster among them, starts of a release, halts seen. */
  public readonly judged = { rolls: 0, laterWave: 0, starts: 0, halts: 0 };
  /** The newest release each stack has carried live, and since when. */
  private readonly reached = new Map<string, { readonly release: number; readonly at: number }>();
  /** Halts recorded (and not resumed since): by release, when, and the cluster whose roll failed. */
  private readonly halts = new Map<
    number,
    { readonly at: string; readonly cluster?: string; readonly version: number }
  >();
  /** Every update of a stack to a release: which cluster's. */
  private readonly starts = new Map<number, { readonly stack: string; readonly cluster: string }[]>();
  /** Updates to a bad release (they roll back), by release: the clusters whose roll failed since its last resume. */
  private readonly failedRolls = new Map<number, Set<string>>();

  constructor(
    private readonly w: SimWorld,
    private readonly judge: ChannelJudge,
  ) {}

  private releaseOf(template: string | undefined): number | undefined {
    return this.w.channel?.releaseOf(imageOfTemplate(template));
  }

  /** As each operation starts (SimWorld's fake onBegin): the three operation invariants. */
  public onBegin(op: OperationStart, cluster: string, replaces: boolean, caller?: number): void {
    if (!this.w.channel || (op.kind !== 'create' && op.kind !== 'update')) return;
    const to = this.releaseOf(op.to);
    if (to === undefined || imageOfTemplate(op.from) === imageOfTemplate(op.to)) return;
    this.judged.starts++;
    this.judge.count();
    const from = this.releaseOf(op.from);
    // Only a roll from a release of the channel must halt: from a template changed out of band (no roll key to read)
    // the reconciler cannot tell an image roll from a config one, and stops the cluster instead (Stalled).
    if (op.kind === 'update' && from !== undefined && this.w.channel.bad.has(this.w.channel.images[to]))
      this.failedRolls.set(to, (this.failedRolls.get(to) ?? new Set()).add(cluster));
    this.halted(op.stackName, cluster, to);
    this.pinned(op.stackName, cluster, to, caller);
    if (op.kind === 'update' && replaces && from !== undefined && to > from) this.waves(op.stackName, cluster, to);
    // A first create is never held by the waves (it replaces no nodes): only rolls count against a later halt.
    if (op.kind === 'update') this.starts.set(to, [...(this.starts.get(to) ?? []), { stack: op.stackName, cluster }]);
  }

  /** As each stack settles complete (not a rollback): the newest release it has carried live. */
  public onSettle(stack: string, template: string | undefined): void {
    const r = this.releaseOf(template);
    if (r !== undefined && r > (this.reached.get(stack)?.release ?? -1))
      this.reached.set(stack, { release: r, at: this.w.aws.clock.ms });
  }

  /** At each write of the channel's status: new halts are recorded (and no later wave has started the release). */
  public onChannelWrite(status: ChannelStatus): void {
    for (const rel of status.releases) {
      if (!rel.halted) continue;
      const r = this.w.channel?.releaseOf(Object.values(rel.images)[0]?.imageId);
      if (r === undefined || this.halts.get(r)?.at === rel.halted.at) continue;
      const cluster = /the roll of (\S+) to it failed/.exec(rel.halted.reason)?.[1];
      this.halts.set(r, { at: rel.halted.at, cluster, version: this.w.channel?.version ?? 0 });
      this.judged.halts++;
      const wave = cluster === undefined ? undefined : this.judge.waveOf(cluster);
      if (wave === undefined) continue;
      for (const s of this.starts.get(r) ?? []) {
        this.judge.count();
        const w = this.judge.waveOf(s.cluster);
        if (w !== undefined && w > wave)
          this.judge.report(
            `[channel-halts] release ${r} (${rel.release}) is halted by ${cluster}'s failed roll (wave ${this.judge.waveName(wave)}), but it had started on ${s.stack} of the later wave ${this.judge.waveName(w)}`,
          );
      }
    }
  }

  /** `channels resume` of release r: it may start again; only a failure after this must halt it again. */
  public onResume(r: number): void {
    this.halts.delete(r);
    this.failedRolls.delete(r);
  }

  /** 2. No start of a release whose halt was recorded (and not resumed since). */
  private halted(stack: string, cluster: string, r: number): void {
    const h = this.halts.get(r);
    this.judge.count();
    // An execute issued before the halt was written, that waited for its turn meanwhile, was decided without it.
    const issued = this.w.channel?.issuedAt.get(stack);
    if (h && !(issued !== undefined && issued < h.version))
      this.judge.report(
        `[channel-halts] ${cluster}: ${stack} starts release ${r} (${channelRelease(r)}), halted at ${h.at} by ${h.cluster ?? 'a failed roll'}`,
      );
  }

  /** 3. The process that starts a release pins the cluster to it (one release at a time per pool). */
  private pinned(stack: string, cluster: string, r: number, caller?: number): void {
    const p = caller === undefined ? undefined : this.w.processes.find((x) => x.id === caller);
    if (!p?.pins) return; // someone else's operation (out of band)
    this.judge.count();
    const raw = this.w.store.lastRead.get(p.id)?.get(cluster) ?? this.w.store.raw(cluster);
    const region = (raw as { spec?: { region?: string } } | undefined)?.spec?.region ?? '';
    const pinned = SimChannel.pinsOf(p.pins).map((resolve) => {
      const pin = resolve(CHANNEL, region, clusterRefOf(raw));
      return 'problem' in pin ? undefined : this.w.channel?.releaseOf(pin.imageId);
    });
    if (!pinned.includes(r))
      this.judge.report(
        `[channel-pin] ${cluster}: process ${p.id} starts ${stack} on release ${r} (${channelRelease(r)}) while it pins the cluster to ${pinned.map((x) => (x === undefined ? 'nothing' : `release ${x}`)).join(' (and before its last refresh to ')}${pinned.length > 1 ? ')' : ''}`,
      );
  }

  /**
   * 1. A later wave's stack starts replacing nodes for release r only once every stack of every earlier wave's cluster
   * on the channel that has a live template has carried r (or newer) live, for its wave's soak.
   */
  private waves(stack: string, cluster: string, r: number): void {
    const policy = this.w.policy;
    this.judged.rolls++;
    if (!policy) return;
    const wave = this.judge.waveOf(cluster);
    if (wave === undefined) return;
    if (wave > 0) this.judged.laterWave++;
    const now = this.w.aws.clock.ms;
    for (const other of this.w.names) {
      const ow = this.judge.waveOf(other);
      if (ow === undefined || ow >= wave) continue;
      const settings = ow < policy.spec.waves.length ? policy.spec.waves[ow] : policy.spec.remainder;
      const soak = parseDuration(settings.soak) ?? 0;
      for (const s of this.judge.stacksInObject(other)) {
        this.judge.count();
        if (!this.onChannel(other, s)) continue;
        const live = this.w.aws.fake.inspect(s)?.template;
        if (!live) continue; // absent, or its first create: never held
        const reached = this.reached.get(s);
        const why =
          !reached || reached.release < r
            ? `carries ${this.carried(live)}${this.w.aws.fake.inspect(s)?.op ? ` (${this.w.aws.truth(s)?.status})` : ''}`
            : now - reached.at < soak
              ? `has carried release ${reached.release} for ${now - reached.at} ms, less than its wave's soak ${settings.soak}`
              : undefined;
        if (why)
          this.judge.report(
            `[channel-waves] ${cluster} (wave ${this.judge.waveName(wave)}) starts replacing the nodes of ${stack} for channel release ${r} while ${other} of the earlier wave ${this.judge.waveName(ow)} has not settled on it: ${s} ${why}`,
          );
      }
    }
  }

  private carried(template: string): string {
    const r = this.releaseOf(template);
    return r === undefined ? `image ${imageOfTemplate(template) ?? 'none'}` : `release ${r}`;
  }

  /** Whether the pool a stack of the cluster carries names the channel in its object now. */
  private onChannel(cluster: string, stack: string): boolean {
    type Pool = { name?: string; imageChannel?: string };
    const spec = (this.w.store.raw(cluster) as { spec?: { pool?: Pool; pools?: Pool[] } } | undefined)?.spec;
    if (!spec) return false;
    if (spec.pool) return spec.pool.imageChannel === CHANNEL;
    const pool =
      stack === workerStackName(cluster)
        ? (spec.pools?.find((p) => p.name === DEFAULT_POOL) ?? spec.pools?.[0])
        : spec.pools?.find((p) => p.name !== undefined && poolStackName(cluster, p.name) === stack);
    return pool?.imageChannel === CHANNEL;
  }

  /**
   * Liveness (part of converged): the newest release published has been read into the channel's status (a process read
   * the source since), and no cluster still on the channel whose roll to a bad release failed (since its last resume) is
   * pinned to that release by the channel's status: the failure halted it (or a newer release took its place).
   */
  public caughtUp(): boolean {
    const c = this.w.channel;
    if (!c) return true;
    // The parameter names the newest image only: a release superseded before any pass read it is never recorded.
    // (Only while some object names the channel: the daemon reads the channels its clusters name.)
    const named = this.w.names.some((n) => this.w.stacksOf(n).some((st) => this.onChannel(n, st)));
    const newest = c.images.at(-1);
    if (named && newest && !c.status.releases.some((r) => Object.values(r.images).some((i) => i?.imageId === newest)))
      return false;
    return this.unhalted().length === 0;
  }

  /** The failed releases still pinned, as `release (clusters)`: what a fleet that has not converged waits for. */
  private unhalted(): string[] {
    const c = this.w.channel;
    if (!c) return [];
    const resolve = c.resolver();
    const out: string[] = [];
    for (const [r, clusters] of this.failedRolls) {
      this.judge.count();
      const pinned = [...clusters].filter((n) => {
        const raw = this.w.store.raw(n);
        if (!raw || !this.w.stacksOf(n).some((s) => this.onChannel(n, s))) return false;
        const pin = resolve(CHANNEL, (raw as { spec?: { region?: string } }).spec?.region ?? '', clusterRefOf(raw));
        return !('problem' in pin) && pin.imageId === c.images[r];
      });
      if (pinned.length) out.push(`${r} (${channelRelease(r)}: its roll failed on ${pinned.join(', ')})`);
    }
    return out;
  }

  /** The channel's state, for the liveness failure message. */
  public describe(): string {
    const c = this.w.channel;
    if (!c) return '';
    const releases = c.status.releases.map(
      (r) => `${r.release}${r.halted ? ' HALTED' : ''}${r.resumedAt ? ' resumed' : ''}`,
    );
    const failed = this.unhalted();
    return `; channel: ${c.images.length} published (bad: ${[...c.bad].map((i) => c.releaseOf(i)).join(', ') || 'none'}), recorded ${releases.join(', ') || 'none'}${failed.length ? `; failed and still pinned: ${failed.join('; ')}` : ''}`;
  }
}
