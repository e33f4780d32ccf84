/**
 * What the daemon has read of a channel: its releases, oldest first, each with its image in every region a cluster of
 * the channel runs in. Written only by the daemon (`channels refresh` too); a release is recorded once and never
 * changes but for `halted`. The status is level-based evidence: a pin is always one of these images, read from the
 * source and checked (architecture, owner) before it was recorded.
 */

/** A release's image in one region, as EC2 described it. */
export interface ReleaseImage {
  readonly imageId: string;
  /** EC2's CreationDate. @default unknown */
  readonly creationDate?: string;
  /** EC2's DeprecationTime: a launch after it may be refused. @default none */
  readonly deprecationTime?: string;
  /** The SSM parameter's version that named it. @default none (a list channel) */
  readonly parameterVersion?: number;
}

export interface ChannelRelease {
  /** The image name (the SSM source) or the list's release name. */
  readonly release: string;
  /** When the daemon first recorded it (ISO 8601). */
  readonly firstSeen: string;
  /** The image by region. */
  readonly images: Readonly<Partial<Record<string, ReleaseImage>>>;
  /** Why no cluster is pinned to it any more: a roll to it failed. @default not halted */
  readonly halted?: { readonly at: string; readonly reason: string };
  /**
   * When an operator lifted its halt (`channels resume`): only a failure after it halts it again. @default never
   */
  readonly resumedAt?: string;
}

/** A source that could not be read or an image that was refused, in one region: nothing new is pinned there. */
export interface ChannelProblem {
  readonly region: string;
  readonly message: string;
}

export interface ChannelStatus {
  /** Which kind of source the releases came from: a channel whose source changes kind pins nothing. @default none yet */
  readonly sourceKind?: 'ssmParameter' | 'images';
  readonly releases: readonly ChannelRelease[];
  /** The problems of the last read, by region; empty when every region read cleanly. */
  readonly problems: readonly ChannelProblem[];
  /** When the source was last read (ISO 8601). @default never */
  readonly lastRead?: string;
}

export const EMPTY_CHANNEL_STATUS: ChannelStatus = { releases: [], problems: [] };

/** A stored status as the daemon wrote it (its releases and problems), or undefined when it is not one. */
export function asChannelStatus(value: unknown): ChannelStatus | undefined {
  const s = value as Partial<ChannelStatus> | null | undefined;
  return s && Array.isArray(s.releases) && Array.isArray(s.problems) ? (s as ChannelStatus) : undefined;
}

/** `status` with `image` recorded as release `release` in `region` (a new release is appended: the newest). */
export function recordRelease(
  status: ChannelStatus,
  release: string,
  region: string,
  image: ReleaseImage,
  now: string,
): ChannelStatus {
  const i = status.releases.findIndex((r) => r.release === release);
  if (i >= 0) {
    const known = status.releases[i];
    if (known.images[region]?.imageId === image.imageId) return status;
    const releases = [...status.releases];
    releases[i] = { ...known, images: { ...known.images, [region]: image } };
    return { ...status, releases };
  }
  return { ...status, releases: [...status.releases, { release, firstSeen: now, images: { [region]: image } }] };
}

/** `status` with release `release`'s halt lifted at `now` (undefined: no such release). */
export function resumeRelease(status: ChannelStatus, release: string, now: string): ChannelStatus | undefined {
  const i = status.releases.findIndex((r) => r.release === release);
  if (i < 0) return undefined;
  const releases = [...status.releases];
  const { halted: _lifted, ...rest } = releases[i];
  releases[i] = { ...rest, resumedAt: now };
  return { ...status, releases };
}

/** `status` with release `release` halted (no-op if unknown or already halted). */
export function haltRelease(status: ChannelStatus, release: string, reason: string, now: string): ChannelStatus {
  const i = status.releases.findIndex((r) => r.release === release);
  if (i < 0 || status.releases[i].halted) return status;
  const releases = [...status.releases];
  releases[i] = { ...releases[i], halted: { at: now, reason } };
  return { ...status, releases };
}
