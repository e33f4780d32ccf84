import { withRuleId } from '../../core/errors';
import { sha256Hex } from '../cloudconfig/checksum';
import { ChannelSpec } from './channel-schema';
import { ChannelRelease, ChannelStatus } from './channel-status';
import { RuleId } from '../cluster/rules/rule-registry';
import { Labels, matches } from '../cluster/schema/selector';

/** A channel as the pins read it: its spec (when it validated) and its status. */
export interface KnownChannel {
  readonly name: string;
  /** undefined: the channel object does not validate (its problems are the channel's; pools on it are held). */
  readonly spec?: ChannelSpec;
  readonly status: ChannelStatus;
}

/** The release a pool is pinned to: its literal AMI id, and which release of which channel it is. */
export interface ImagePin {
  readonly channel: string;
  readonly release: string;
  readonly imageId: string;
  /** The channel's architecture: every image of it runs this one. */
  readonly architecture: 'x86_64' | 'arm64';
  /** The image's EC2 DeprecationTime, when it has one. @default none */
  readonly deprecationTime?: string;
}

/**
 * Why a pool has no pin: a sentence for the pool's field path, ending with `(rule <id>)`, and the id of the named rule
 * (lib/model/cluster/rules/rule-registry.ts) it broke.
 */
export interface Unpinned {
  readonly problem: string;
  readonly rule: RuleId;
}

/** `text` as the problem of the named rule `rule`. */
const unpinned = (rule: RuleId, text: string): Unpinned => ({ problem: withRuleId(text, rule), rule });

/** Resolves a pool's channel in a region: the pin, or why there is none. */
export type ImageResolver = (channel: string, region: string, cluster?: ClusterRef) => ImagePin | Unpinned;

/** The cluster a pin is for: holds select clusters by name or by label. */
export interface ClusterRef {
  readonly name: string;
  readonly labels: Labels;
}

/** The newest release a cluster may run, when the channel's spec caps it: a hold that selects it, or the promotion. */
export interface ReleaseCeiling {
  readonly release: string;
  /** The field that sets it, as messages name it: `spec.holds[1]` or `spec.promotedRelease`. */
  readonly by: string;
}

/** The cap on the releases `cluster` runs: the first hold that selects it, else the promoted release, else none. */
export function ceilingOf(spec: ChannelSpec, cluster: ClusterRef | undefined): ReleaseCeiling | undefined {
  const i = cluster
    ? spec.holds.findIndex((h) =>
        h.clusters ? h.clusters.includes(cluster.name) : matches(h.selector, cluster.labels),
      )
    : -1;
  if (i >= 0) return { release: spec.holds[i].release, by: `spec.holds[${i}]` };
  return spec.promotedRelease !== undefined ? { release: spec.promotedRelease, by: 'spec.promotedRelease' } : undefined;
}

/**
 * The release of `channel` a pool in `region` runs: the newest recorded release that is neither skipped nor halted and
 * has an image in the region (for a list channel, one still listed), at or before the cluster's ceiling (a hold, or the
 * release promoted by hand) when the spec sets one. Undefined when none is, or the ceiling names a release not
 * recorded. Every cluster under the same ceiling is pinned to the same release; the fleet rollout's waves decide when
 * each cluster's stack takes it (a new release is a roll).
 */
export function pickRelease(channel: KnownChannel, region: string, cluster?: ClusterRef): ChannelRelease | undefined {
  const spec = channel.spec;
  if (!spec) return undefined;
  const listed = spec.source.images ? new Set(spec.source.images.map((r) => r.release)) : undefined;
  const skipped = new Set(spec.skipReleases);
  const ceiling = ceilingOf(spec, cluster);
  let top = channel.status.releases.length - 1;
  if (ceiling) {
    top = channel.status.releases.findIndex((r) => r.release === ceiling.release);
    if (top < 0) return undefined;
  }
  for (let i = top; i >= 0; i--) {
    const r = channel.status.releases[i];
    if (r.halted || skipped.has(r.release) || (listed && !listed.has(r.release))) continue;
    if (r.images[region]) return r;
  }
  return undefined;
}

/** The cluster a raw object is (read defensively: it may not validate). */
export function clusterRefOf(raw: unknown): ClusterRef | undefined {
  const metadata = (raw as { metadata?: { name?: unknown; labels?: unknown } } | undefined)?.metadata;
  if (typeof metadata?.name !== 'string') return undefined;
  const labels = metadata.labels && typeof metadata.labels === 'object' ? (metadata.labels as Labels) : {};
  return { name: metadata.name, labels };
}

/** The resolver over a set of known channels (the store's, read once per pass). */
export function imageResolver(channels: readonly KnownChannel[]): ImageResolver {
  const byName = new Map(channels.map((c) => [c.name, c]));
  return (name, region, cluster) => {
    const channel = byName.get(name);
    if (!channel) return unpinned('image-channel', `no WorkerImageChannel named ${JSON.stringify(name)}`);
    if (!channel.spec)
      return unpinned(
        'image-channel',
        `WorkerImageChannel ${name} does not validate; fix it (worker-stacks validate names its problems)`,
      );
    const kind = channel.spec.source.ssmParameter ? 'ssmParameter' : 'images';
    if (channel.status.sourceKind !== undefined && channel.status.sourceKind !== kind)
      return unpinned(
        'channel-source',
        `WorkerImageChannel ${name}: its source changed from ${channel.status.sourceKind} to ${kind}, so its recorded releases are not the source's; put the source back, or create a new channel and name it here`,
      );
    const ceiling = ceilingOf(channel.spec, cluster);
    if (ceiling && !channel.status.releases.some((r) => r.release === ceiling.release))
      return unpinned(
        ceiling.by === 'spec.promotedRelease' ? 'channel-promotion' : 'channel-holds',
        `WorkerImageChannel ${name}: ${ceiling.by} names release ${JSON.stringify(ceiling.release)}, which is not recorded (${recordedNames(channel)}); name a recorded release (worker-stacks channels status lists them)`,
      );
    const release = pickRelease(channel, region, cluster);
    const image = release?.images[region];
    if (!release || !image) {
      const why = channel.status.problems.find((p) => p.region === region)?.message;
      return unpinned(
        'image-channel',
        `WorkerImageChannel ${name} has no release for ${region} yet${why ? ` (${why})` : ''}; the daemon reads it at every pass, or run worker-stacks channels refresh`,
      );
    }
    return {
      channel: name,
      release: release.release,
      imageId: image.imageId,
      architecture: channel.spec.architecture,
      ...(image.deprecationTime ? { deprecationTime: image.deprecationTime } : {}),
    };
  };
}

/** The recorded releases, newest last, for a message (the last few). */
function recordedNames(channel: KnownChannel): string {
  const names = channel.status.releases.map((r) => r.release);
  if (names.length === 0) return 'none is yet';
  return `recorded: ${names.length > 5 ? '..., ' : ''}${names.slice(-5).join(', ')}`;
}

/** A resolver that has no channels to read, and says why: every pool that names one is refused with `why`. */
export function noChannelsIn(why: string): ImageResolver {
  return (name) => unpinned('image-channel', `image channel ${JSON.stringify(name)} cannot be read: ${why}`);
}

/**
 * Whether a pending roll's cause (status.pendingRoll: `image`, `config, image`, `release 0.1.0 → 0.2.0: image, ...`)
 * replaces the machine image.
 */
export function rollsImage(cause: string | undefined): boolean {
  return cause !== undefined && /(^|, |: )image\b/.test(cause);
}

/** The channels a raw cluster object's pools name (read defensively: the object may not validate). */
export function channelsNamed(raw: unknown): string[] {
  const spec = (raw as { spec?: { pool?: unknown; pools?: unknown } } | undefined)?.spec;
  const pools: unknown[] = [spec?.pool, ...(Array.isArray(spec?.pools) ? (spec.pools as unknown[]) : [])];
  const names = pools
    .map((p) => (p as { imageChannel?: unknown } | null | undefined)?.imageChannel)
    .filter((n): n is string => typeof n === 'string');
  return [...new Set(names)].sort();
}

/**
 * What a cluster's derived inputs depend on besides its bytes: the pins of the channels it names, in its region. A new
 * release changes it (the cluster is synthesized again); a release of a channel it does not name does not.
 */
export function pinsKey(raw: unknown, resolve: ImageResolver | undefined): string {
  const names = channelsNamed(raw);
  if (names.length === 0 || !resolve) return '';
  const region = (raw as { spec?: { region?: unknown } } | undefined)?.spec?.region;
  if (typeof region !== 'string') return '';
  const cluster = clusterRefOf(raw);
  return sha256Hex(JSON.stringify(names.map((n) => [n, resolve(n, region, cluster)])));
}
