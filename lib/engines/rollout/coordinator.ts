import { channelsNamed, ImageResolver, pinsKey } from '../../model/channel/image-pins';
import { StackSummary } from '../../model/ports/cloudformation-port';
import { listTemplates, TemplateSet, templatesVersion } from '../../model/cloudconfig/templates';
import { derive } from '../../model/cluster/derive';
import { WorkerCluster } from '../../model/cluster/schema/schema';
import { ClusterRecord, ClusterStore } from '../../model/ports/cluster-store';
import { derivedKey, DerivedCache } from '../../model/cluster/derived-cache';
import { Decision, decide, Fleet, placeAll } from './gate';
import { WaveCensuses } from './wave-census';
import { FleetMember, fleetMember, MemberSpec } from './fleet';
import { RolloutPolicySource } from './policy-source';
import { combinesPools, poolChecksums } from './pool-checksums';
import { RenderedConfig } from '../../model/cloudconfig/render';
import { templateDirectory } from '../../platform/files/template-directory';

/** What the reconciler's wait-for-wave task asks of the fleet rollout. */
export interface RolloutGate {
  /**
   * May this cluster start rolling its nodes now? `self` is the cluster as its own reconcile sees it this moment
   * (fresher than any snapshot). A `go` counts against its wave's concurrency until `release`.
   */
  decide(self: FleetMember): Promise<Decision>;
  /**
   * The cluster's reconcile has ended: what it did is now in its status (or its stack). `changed`: it may have changed
   * what others decide on (it wrote a status, a stack moved), so its member is read again. @default false
   */
  release(name: string, changed?: boolean): Promise<void>;
}

export interface RolloutCoordinatorProps {
  readonly store: ClusterStore;
  readonly policies: RolloutPolicySource;
  /** The cluster's stack from the pass's listing (null: listed and absent; undefined: not listed). */
  readonly stackOf: (record: ClusterRecord) => Promise<StackSummary | null | undefined>;
  readonly templatesDir: string;
  /** The image channels' pins as last read (the reconciler's own). @default none */
  readonly images?: () => ImageResolver;
  /** Code fingerprint (derived-cache keys). */
  readonly code: string;
  /**
   * The code whose recorded roll keys are current (the daemon's own): a member whose keys another code read counts
   * as a replacement pending until its reconcile reads them anew (fleet.ts). @default none: keys count whoever read them
   */
  readonly rollKeysOf?: string;
  readonly now: () => Date;
  /** Reuse the reconciler's validated and rendered objects. @default none */
  readonly derived?: DerivedCache;
  /** A snapshot of the fleet is read again when older than this (clock time). @default 5 s */
  readonly maxAgeMs?: number;
  /**
   * Called with the fleet after each full read, and after a cluster's member changed on release: the daemon compares
   * the waves with its last look (wave-watch.ts). @default none
   */
  readonly onSnapshot?: (fleet: Fleet) => void;
}

/**
 * The spec fields the gate reads, from a validated object. `configs` (every pool's rendered config, Derivation.configs)
 * makes a cluster of several pools compare every pool's checksum: without them, only the checksum passed to
 * fleetMember is compared (a single-pool cluster's, which is all it has). @default no configs
 */
export function memberSpec(
  c: WorkerCluster,
  configs?: ReadonlyMap<string, Pick<RenderedConfig, 'checksum'>>,
): MemberSpec {
  const byPool = poolChecksums(c, configs);
  return {
    labels: c.metadata.labels,
    template: c.spec.cloudConfig.template,
    channels: channelsNamed(c),
    hold: c.spec.rollout.hold,
    paused: c.spec.paused,
    windows: c.spec.rollout.maintenanceWindows,
    ...(byPool ? { poolChecksums: byPool } : {}),
  };
}

/**
 * The fleet rollout for one reconciler process: a snapshot of every object (its desired checksum rendered, memoized
 * on its bytes and the templates) and its listed stack, read again when older than a poll interval, and the
 * clusters it let through that have not finished their reconcile yet. Everything else is derived from the objects
 * and the live stacks, so a restarted process decides the same.
 */
export class RolloutCoordinator implements RolloutGate {
  private snapshotAt = Number.NEGATIVE_INFINITY;
  private members = new Map<string, FleetMember>();
  private loading?: Promise<void>;
  private policies: Fleet['policies'] = { policies: [], problems: [] };
  private readonly admitted = new Set<string>();
  private version?: string;
  /** The image channels' pins the snapshot was derived under (props.images at its load). */
  private pinsRead?: ImageResolver;
  private readonly memo = new Map<string, { key: string; desired?: string; spec: MemberSpec }>();
  /** placeAll of the members and policies as they are: it reads only names, namespaces and labels (see setMember). */
  private placed?: ReturnType<typeof placeAll>;
  /** The gate's censuses (wave-census.ts): told of every member that changes, cleared when the placements change. */
  private readonly censuses = new WaveCensuses();

  constructor(private readonly props: RolloutCoordinatorProps) {}

  public async decide(self: FleetMember): Promise<Decision> {
    await this.fresh();
    this.setMember(self.name, self);
    const fleet: Fleet = { members: this.members, policies: this.policies };
    this.placed ??= placeAll(fleet);
    const d = decide(self.name, fleet, this.props.now(), this.admitted, this.placed, this.censuses);
    if (d.go) {
      this.admitted.add(self.name);
      this.censuses.update(self.name, self, this.placed.placements.get(self.name), this.admitted);
    }
    return d;
  }

  public async release(name: string, changed = false): Promise<void> {
    // A cluster let through changed what others decide on (it executed, or it did not), and so may one whose
    // reconcile wrote (a roll recorded complete, a failure): read that one object again, so that the next decision
    // and the wave watch see it now, not at the next snapshot.
    const admitted = this.admitted.delete(name);
    if (admitted) this.censuses.update(name, this.members.get(name), this.placed?.placements.get(name), this.admitted);
    if ((!admitted && !changed) || this.snapshotAt === Number.NEGATIVE_INFINITY) return;
    const before = this.members.get(name);
    const record = await this.props.store.get(name).catch(() => undefined);
    const m = record
      ? await this.memberOf(record, this.version ?? templatesVersion(templateDirectory(this.props.templatesDir)))
      : undefined;
    this.setMember(name, m);
    if (rolloutState(before) !== rolloutState(m))
      this.props.onSnapshot?.({ members: this.members, policies: this.policies });
  }

  /** The fleet as of now (read again), for `rollout status`, metrics and review. */
  public async snapshot(force = false): Promise<Fleet> {
    await this.fresh(force);
    return { members: this.members, policies: this.policies };
  }

  private async fresh(force = false): Promise<void> {
    const now = this.props.now().getTime();
    // New pins of the image channels (a pass refreshed them) make the snapshot old however young: a member derived
    // under the last pins would look settled on a release its reconcile has not read (the simulator found a later
    // wave let through so, while the canary had not started the release).
    const pins = this.props.images?.();
    if (!force && now - this.snapshotAt < (this.props.maxAgeMs ?? 5000) && pins === this.pinsRead) return;
    this.loading ??= this.load(now).finally(() => (this.loading = undefined));
    await this.loading;
  }

  private async load(now: number): Promise<void> {
    const pins = this.props.images?.();
    const [records, policies] = await Promise.all([this.props.store.list(), this.props.policies.load()]);
    const version = templatesVersion(templateDirectory(this.props.templatesDir));
    const members = new Map<string, FleetMember>();
    for (const [i, r] of records.entries()) {
      const m = await this.memberOf(r, version);
      if (m) members.set(r.name, m);
      // After a template change every object renders anew (a few ms each): let timers and health checks in between.
      if (i % 25 === 24) await new Promise((resolve) => setImmediate(resolve));
    }
    this.members = members;
    this.policies = policies;
    this.placed = undefined;
    this.censuses.clear();
    this.version = version;
    this.snapshotAt = now;
    this.pinsRead = pins;
    this.props.onSnapshot?.({ members, policies });
  }

  /**
   * Sets (or with undefined removes) one member. The waves are placed again only when that changes what placeAll
   * reads (a member added or removed, other labels or namespace); else the censuses count this one member anew: a
   * decision about one of a thousand held clusters does not read the thousand again.
   */
  private setMember(name: string, m: FleetMember | undefined): void {
    const before = this.members.get(name);
    if (m) this.members.set(name, m);
    else this.members.delete(name);
    if (!before || !m || placedOn(before) !== placedOn(m)) {
      this.placed = undefined;
      this.censuses.clear();
    } else this.censuses.update(name, m, this.placed?.placements.get(name), this.admitted);
  }

  private async memberOf(record: ClusterRecord, version: string): Promise<FleetMember | undefined> {
    if (record.raw === undefined) return undefined;
    const { desired, spec } = this.derive(record, version);
    const stack = await this.props.stackOf(record);
    return fleetMember(record, spec, desired, stack ?? undefined, this.props.rollKeysOf);
  }

  /**
   * The templates directory as listed for `version` (templatesVersion): listed once per version, not once per object
   * rendered (after new pins or a template change, every object of the fleet is rendered again).
   */
  private templatesAt(version: string): TemplateSet {
    if (this.listed?.version !== version)
      this.listed = { version, templates: listTemplates(templateDirectory(this.props.templatesDir)) };
    return this.listed.templates;
  }
  private listed?: { readonly version: string; readonly templates: TemplateSet };

  /** The object's desired checksum and the spec fields the gate reads, memoized on its bytes and the templates. */
  private derive(record: ClusterRecord, version: string): { desired?: string; spec: MemberSpec } {
    const images = this.props.images?.();
    const pins = pinsKey(record.raw, images);
    const key = derivedKey(record.contentHash, record.source, version, this.props.code, pins);
    // A cluster on a channel is settled on its pins only once its reconcile recorded them applied (fleet.ts inputsKey).
    const onChannel = pins && key !== undefined ? { inputsKey: key } : {};
    const hit = key === undefined ? undefined : this.memo.get(record.name);
    if (hit && hit.key === key) return hit;
    // The reconciler's cache holds the first pool's config only: a cluster of several pools is rendered here.
    const found = this.props.derived?.get(record.name, key);
    const cached = found && !combinesPools(found.cluster) ? found : undefined;
    let value: { desired?: string; spec: MemberSpec };
    if (cached) {
      value = { desired: cached.config.checksum, spec: { ...memberSpec(cached.cluster), ...onChannel } };
    } else {
      // The one validate → render of every command; an object that does not render has no desired checksum: its own
      // reconcile says why, and it is no peer of anyone's change.
      const d = record.parseProblems.length
        ? undefined
        : derive(record.raw, {
            file: record.source,
            templateSource: this.templatesAt(version).source,
            templates: this.templatesAt(version),
            images,
          });
      value = {
        desired: d?.config?.checksum,
        spec: d?.cluster ? { ...memberSpec(d.cluster, d.configs), ...onChannel } : rawSpec(record.raw),
      };
    }
    if (key !== undefined) this.memo.set(record.name, { key, ...value });
    return value;
  }
}

/** What placeAll reads of a member (besides its name). */
function placedOn(m: FleetMember): string {
  return JSON.stringify([m.namespace ?? null, m.labels]);
}

/** What the waves are made of, for one member: a change here can change a wave's state. */
function rolloutState(m: FleetMember | undefined): string {
  return m
    ? JSON.stringify([
        m.labels,
        m.template,
        m.channels,
        m.desired,
        m.live,
        m.poolsRolling,
        m.stack?.status,
        m.executing,
        m.readySince,
        m.recordedLive,
        m.failedRoll,
        m.rollPending,
      ])
    : '';
}

/** What can be read of an object that does not validate (its labels still place it in a wave). */
function rawSpec(raw: unknown): MemberSpec {
  const r = raw as { metadata?: { labels?: unknown }; spec?: { cloudConfig?: { template?: unknown } } } | undefined;
  const labels =
    r?.metadata?.labels && typeof r.metadata.labels === 'object' ? (r.metadata.labels as Record<string, string>) : {};
  const template = typeof r?.spec?.cloudConfig?.template === 'string' ? r.spec.cloudConfig.template : undefined;
  return { labels, template, channels: channelsNamed(raw) };
}
