import { ChannelSpec } from '../../model/channel/channel-schema';
import { ChannelProblem, ChannelStatus, recordRelease } from '../../model/channel/channel-status';
import { ImageDescription, ImageSource } from '../../model/ports/image-source';

/** Which kind of source a channel's recorded releases came from: a channel whose source changes kind is refused. */
export type SourceKind = 'ssmParameter' | 'images';
export const sourceKind = (spec: ChannelSpec): SourceKind => (spec.source.ssmParameter ? 'ssmParameter' : 'images');

/** A channel's status after a refresh, and what the refresh read (the cost the bench counts). */
export interface Refreshed {
  readonly status: ChannelStatus;
  /** Releases recorded by this read, as `release (region)`. */
  readonly recorded: readonly string[];
}

/**
 * Reads one channel's source once in each region and records what is new. An image is recorded only after EC2 has
 * described it: it exists in the region, is of the channel's architecture, and one of its trusted owners owns it;
 * otherwise the region gets a problem and keeps its last release (a bad release is never pinned). A read error in a
 * region is that region's problem; the other regions go on.
 */
export async function refreshChannel(
  name: string,
  spec: ChannelSpec,
  status: ChannelStatus,
  regions: readonly string[],
  source: ImageSource,
  now: string,
): Promise<Refreshed> {
  const kind = sourceKind(spec);
  if (status.sourceKind !== undefined && status.sourceKind !== kind && status.releases.length > 0)
    return {
      status: {
        ...status,
        lastRead: now,
        problems: regions.map((region) => ({
          region,
          message: `the source changed from ${status.sourceKind} to ${kind}: its recorded releases came from the other source, and nothing new is pinned (put the source back, or create a new channel and point the pools at it) (rule channel-source)`,
        })),
      },
      recorded: [],
    };
  let next: ChannelStatus = status;
  const problems: ChannelProblem[] = [];
  const recorded: string[] = [];
  for (const region of [...regions].sort()) {
    try {
      const found = await candidates(spec, region, source);
      if ('problem' in found) {
        problems.push({ region, message: found.problem });
        continue;
      }
      const described = new Map(
        (
          await source.describeImages(
            region,
            found.map((c) => c.imageId),
          )
        ).map((i) => [i.imageId, i]),
      );
      for (const c of found) {
        const image = described.get(c.imageId);
        const refused = image ? refusal(spec, image) : `${c.imageId} does not exist in ${region}`;
        if (refused || !image) {
          problems.push({
            region,
            message: `${c.what}: ${refused ?? 'not described'}; it is not pinned (rule image-channel)`,
          });
          continue;
        }
        const release = c.release ?? image.name;
        const before = next;
        next = recordRelease(
          next,
          release,
          region,
          {
            imageId: image.imageId,
            ...(image.creationDate ? { creationDate: image.creationDate } : {}),
            ...(image.deprecationTime ? { deprecationTime: image.deprecationTime } : {}),
            ...(c.version !== undefined ? { parameterVersion: c.version } : {}),
          },
          now,
        );
        if (next !== before) recorded.push(`${release} (${region})`);
      }
    } catch (e) {
      problems.push({ region, message: `reading the source failed: ${(e as Error).message} (retried next poll)` });
    }
  }
  return { status: { ...next, sourceKind: kind, problems, lastRead: now }, recorded };
}

interface Candidate {
  readonly imageId: string;
  /** The list's release name; undefined: the image's name (the SSM source). */
  readonly release?: string;
  readonly version?: number;
  /** What the problem names. */
  readonly what: string;
}

async function candidates(
  spec: ChannelSpec,
  region: string,
  source: ImageSource,
): Promise<readonly Candidate[] | { problem: string }> {
  const param = spec.source.ssmParameter;
  if (param === undefined)
    return (spec.source.images ?? []).flatMap((r) => {
      const imageId = r.imageIds[region];
      return imageId ? [{ imageId, release: r.release, what: `release ${r.release}` }] : [];
    });
  const p = await source.parameter(region, param);
  if (!p) return { problem: `SSM parameter ${param} does not exist in ${region} (rule image-channel)` };
  if (!/^ami-([0-9a-f]{8}|[0-9a-f]{17})$/.test(p.value))
    return { problem: `SSM parameter ${param} is ${JSON.stringify(p.value)}, not an AMI id (rule image-channel)` };
  return [{ imageId: p.value, version: p.version, what: `${param} (version ${p.version}) names ${p.value}` }];
}

/** Why an image may not be pinned from this channel, if it may not. */
function refusal(spec: ChannelSpec, image: ImageDescription): string | undefined {
  if (image.architecture !== spec.architecture)
    return `${image.imageId} (${image.name}) is ${image.architecture}, the channel is ${spec.architecture}`;
  const owners = new Set(spec.owners);
  if (!owners.has(image.ownerId) && !(image.ownerAlias && owners.has(image.ownerAlias)))
    return `${image.imageId} (${image.name}) is owned by ${image.ownerAlias ?? image.ownerId}, which the channel does not trust (owners: ${spec.owners.join(', ')})`;
  return undefined;
}
