import { ClusterRecord } from '../../model/ports/cluster-store';
import { KnownChannel } from '../../model/channel/image-pins';
import { partDigest } from '../stacks/roll-key';

/**
 * The digests of the AMI ids the cluster's live stacks run: each pool's live roll key has a part per launch property
 * (roll-key.ts), its `ImageId` among them, as the reconciler last read it from the live template. Evidence from the
 * stacks, not from what the daemon meant to deploy.
 */
function liveImageDigests(record: ClusterRecord): Set<string> {
  const keys = [
    record.status?.controller?.rollKeys?.live,
    ...(record.status?.pools ?? []).map((p) => p.controller?.rollKeys?.live),
  ];
  const out = new Set<string>();
  for (const k of keys)
    for (const [part, digest] of Object.entries(k?.parts ?? {})) if (/(^|\.)ImageId$/.test(part)) out.add(digest);
  return out;
}

/**
 * The release of `channel` the cluster's live stacks run: the oldest whose image in its region a live stack runs (the
 * cluster has moved only when all its pools have). Undefined when none does, or its live keys were never read.
 */
export function liveRelease(channel: KnownChannel, record: ClusterRecord, region: string): string | undefined {
  const live = liveImageDigests(record);
  if (live.size === 0) return undefined;
  return channel.status.releases.find((r) => {
    const image = r.images[region];
    return image !== undefined && live.has(partDigest(image.imageId));
  })?.release;
}
