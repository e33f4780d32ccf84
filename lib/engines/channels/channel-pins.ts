import { ChannelStatus } from '../../model/channel/channel-status';
import { ClusterRecord } from '../../model/ports/cluster-store';
import { ImageSource } from '../../model/ports/image-source';
import {
  channelsNamed,
  clusterRefOf,
  imageResolver,
  ImageResolver,
  KnownChannel,
} from '../../model/channel/image-pins';
import type { Logger } from '../../core/logger';
import { ChannelStore } from './channel-store';
import { refreshChannel } from './refresh';
import { haltFailedReleases } from './release-halts';
import { liveRelease } from './live-release';

export interface ChannelPinsProps {
  readonly store: ChannelStore;
  readonly source: ImageSource;
  readonly now: () => Date;
  readonly log?: Logger;
}

/** What one refresh did: the source reads (one per channel and region) and the releases it recorded. */
export interface RefreshReport {
  readonly reads: number;
  readonly recorded: readonly string[];
  /** Releases halted by this refresh, as `release (cluster)`: a roll to them failed. */
  readonly halted: readonly string[];
  /** Pinned images whose EC2 deprecation time is past or within DEPRECATION_NOTICE_MS: new nodes may not launch. */
  readonly warnings: readonly string[];
  readonly problems: readonly string[];
  /** The clusters of each channel by the release they are pinned to and whether their stacks run it (the metrics). */
  readonly census: readonly ChannelCensusRow[];
  /** Per channel some cluster names: whether its newest release is halted, and its source's problems (the metrics). */
  readonly health: readonly { readonly channel: string; readonly newestHalted: boolean; readonly problems: number }[];
}

/** Clusters of one channel pinned to one release: `runs` it, `waits` for it (their wave, a window, a failure), or `unpinned`. */
export interface ChannelCensusRow {
  readonly channel: string;
  /** The release pinned ('' when unpinned). */
  readonly release: string;
  readonly state: 'runs' | 'waits' | 'unpinned';
  readonly clusters: number;
}

/**
 * The image channels as the reconciler reads them: refreshed once a pass (each channel's source read once in each
 * region of the clusters that name it, whatever their number), and the pins every reconcile of that pass validates
 * with. One owner, the controller, calls refresh; reconciles only read `resolver()`. A failed load keeps the last
 * good pins (a channel store that cannot be read for a poll does not unpin a fleet).
 */
export class ChannelPins {
  private current: ImageResolver = imageResolver([]);

  constructor(private readonly props: ChannelPinsProps) {}

  public resolver(): ImageResolver {
    return this.current;
  }

  /** Reads the channels the records' pools name, in their regions, records new releases, and takes the new pins. */
  public async refresh(records: readonly ClusterRecord[]): Promise<RefreshReport> {
    const loaded = await this.props.store.load();
    const regions = regionsByChannel(records);
    const channels: KnownChannel[] = [];
    const recorded: string[] = [];
    const halted: string[] = [];
    const problems: string[] = loaded.problems.map((p) => `${p.file}: ${p.path}: ${p.message}`);
    let reads = 0;
    const writes: { readonly name: string; readonly status: ChannelStatus }[] = [];
    const now = this.props.now().toISOString();
    for (const c of loaded.channels) {
      const used = [...(regions.get(c.name) ?? [])];
      if (!c.spec || used.length === 0) {
        channels.push(c);
        continue;
      }
      const r = await refreshChannel(c.name, c.spec, c.status, used, this.props.source, now);
      reads += used.length;
      recorded.push(...r.recorded.map((x) => `${c.name}: ${x}`));
      problems.push(...r.status.problems.map((p) => `${c.name} (${p.region}): ${p.message}`));
      const onIt = records.filter((rec) => channelsNamed(rec.raw).includes(c.name));
      const h = haltFailedReleases(c, r.status, onIt, now);
      halted.push(...h.halted.map((x) => `${c.name}: ${x}`));
      // lastRead alone is not worth a write every pass: the status changes when a release, a halt or a problem does.
      if (
        r.recorded.length ||
        h.halted.length ||
        JSON.stringify(r.status.problems) !== JSON.stringify(c.status.problems)
      )
        writes.push({ name: c.name, status: h.status });
      channels.push({ ...c, status: h.status });
    }
    // The new pins first, then the writes: a reconcile of this process that executes while a halt is being written
    // already pins the release before it (the simulator found one starting a release its own process had just halted).
    // A write that fails leaves the halt in force here only; the next refresh derives it again from the objects.
    this.current = imageResolver(channels);
    for (const w of writes) await this.props.store.writeStatus(w.name, w.status);
    const warnings = deprecationWarnings(this.current, records, this.props.now().getTime());
    for (const w of warnings) this.props.log?.warn({ warning: w }, 'pinned image deprecates soon');
    for (const x of recorded) this.props.log?.info({ release: x }, 'image channel release recorded');
    for (const x of halted) this.props.log?.warn({ release: x }, 'image channel release halted: a roll to it failed');
    const health = channels
      .filter((c) => regions.has(c.name))
      .map((c) => ({
        channel: c.name,
        newestHalted: c.status.releases.at(-1)?.halted !== undefined,
        problems: c.status.problems.length,
      }));
    return { reads, recorded, halted, problems, warnings, census: census(this.current, channels, records), health };
  }
}

/** How long before a pinned image's deprecation time the daemon starts to say so. */
const DEPRECATION_NOTICE_MS = 14 * 24 * 3_600_000;

/**
 * The pins whose image deprecates within the notice (or did): said before a node launch fails on it. EC2 still
 * launches a deprecated image by its id, but an account may refuse it (and its owner may deregister it next).
 */
function deprecationWarnings(resolve: ImageResolver, records: readonly ClusterRecord[], now: number): string[] {
  const out = new Set<string>();
  for (const r of records) {
    const region = (r.raw as { spec?: { region?: unknown } } | undefined)?.spec?.region;
    if (typeof region !== 'string') continue;
    for (const channel of channelsNamed(r.raw)) {
      // Holds pin clusters of one channel and region to different releases: each pin is said once.
      const pin = resolve(channel, region, clusterRefOf(r.raw));
      if ('problem' in pin || !pin.deprecationTime) continue;
      const at = Date.parse(pin.deprecationTime);
      if (at - now > DEPRECATION_NOTICE_MS) continue;
      out.add(
        `${channel} (${region}): the pinned image ${pin.imageId} (release ${pin.release}) ${at <= now ? 'was deprecated' : 'deprecates'} at ${pin.deprecationTime}; publish a newer release to the channel's source, or new nodes may fail to launch`,
      );
    }
  }
  return [...out].sort();
}

/** Every cluster of every channel, counted by its pin and whether its live stacks run it (live-release.ts). */
function census(
  resolve: ImageResolver,
  channels: readonly KnownChannel[],
  records: readonly ClusterRecord[],
): ChannelCensusRow[] {
  const counts = new Map<string, ChannelCensusRow>();
  for (const c of channels)
    for (const r of records) {
      const region = (r.raw as { spec?: { region?: unknown } } | undefined)?.spec?.region;
      if (typeof region !== 'string' || !channelsNamed(r.raw).includes(c.name)) continue;
      const pin = resolve(c.name, region, clusterRefOf(r.raw));
      const release = 'problem' in pin ? '' : pin.release;
      const state = 'problem' in pin ? 'unpinned' : liveRelease(c, r, region) === release ? 'runs' : 'waits';
      const key = JSON.stringify([c.name, release, state]);
      const row = counts.get(key);
      counts.set(key, { channel: c.name, release, state, clusters: (row?.clusters ?? 0) + 1 });
    }
  return [...counts.values()];
}

/** Each channel's regions: those of the clusters whose pools name it. */
function regionsByChannel(records: readonly ClusterRecord[]): ReadonlyMap<string, ReadonlySet<string>> {
  const out = new Map<string, Set<string>>();
  for (const r of records) {
    const region = (r.raw as { spec?: { region?: unknown } } | undefined)?.spec?.region;
    if (typeof region !== 'string') continue;
    for (const name of channelsNamed(r.raw)) {
      let set = out.get(name);
      if (!set) out.set(name, (set = new Set()));
      set.add(region);
    }
  }
  return out;
}
