import { UsageError } from '../../core/errors';
import { LabelSelector } from './label-selector';
import { ShardSpec } from './manifests-rbac';
import { checkShardName } from './shards';

/** What deployManifests (manifests.ts) is given from the command line, checked: the shards and the image reference. */

/** The shards, checked: DNS-label names, once each, valid selectors, no two that one object could match. */
export function checkShards(shards: readonly ShardSpec[]): void {
  const seen = new Set<string>();
  for (const [i, s] of shards.entries()) {
    checkShardName(s.name);
    if (seen.has(s.name)) throw new UsageError(`--shard ${s.name}: given twice`);
    seen.add(s.name);
    const a = LabelSelector.parse(s.selector);
    for (const t of shards.slice(0, i)) {
      if (a.overlaps(LabelSelector.parse(t.selector))) {
        throw new UsageError(
          `--shard ${s.name}=${s.selector} overlaps --shard ${t.name}=${t.selector}: an object could match both, and both would reconcile it; make the selectors disjoint (for example tier=canary and tier!=canary)`,
        );
      }
    }
  }
}

/** `name@sha256:…`; a reference that already has a digest, or a malformed digest, is refused. */
export function imageReference(image: string, digest?: string): string {
  if (!digest) return image;
  if (!/^sha256:[0-9a-f]{64}$/.test(digest))
    throw new UsageError(
      `--image-digest ${JSON.stringify(digest)}: give sha256: and 64 lower-case hex digits (docker buildx imagetools inspect <image> shows it)`,
    );
  if (image.includes('@'))
    throw new UsageError(
      `--image ${image} already names a digest: give it without @sha256:… when --image-digest is given`,
    );
  return `${image}@${digest}`;
}
