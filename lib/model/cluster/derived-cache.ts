import { sha256Hex } from '../cloudconfig/checksum';
import { WorkerCluster } from './schema/schema';
import { RenderedConfig } from '../cloudconfig/render';

/** What the reconciler derives from one object's content: the validated cluster, its config, the inputs' fingerprint. */
export interface Derived {
  readonly cluster: WorkerCluster;
  readonly config: RenderedConfig;
  readonly fingerprint: string;
}

/**
 * Validation, rendering and fingerprinting are pure functions of the object's
 * bytes, the template directory's content (templatesVersion) and the code. A daemon that sees the same bytes again reuses the result: an
 * unchanged cluster costs a file read and a hash, not a parse and a render.
 * One entry per cluster, so the cache is as big as the fleet and no bigger.
 */
export class DerivedCache {
  private readonly entries = new Map<string, { key: string; value: Derived }>();

  public get(cluster: string, key: string | undefined): Derived | undefined {
    const e = key === undefined ? undefined : this.entries.get(cluster);
    return e && e.key === key ? e.value : undefined;
  }

  public set(cluster: string, key: string | undefined, value: Derived): void {
    if (key !== undefined) this.entries.set(cluster, { key, value });
  }
}

/** The cache key of one object: its content, where it came from, and what renders it. */
export function derivedKey(
  contentHash: string | undefined,
  source: string,
  templatesVersion: string,
  code: string,
  /** The image channels' pins the object's pools read (lib/model/channel/image-pins.ts pinsKey). @default none */
  pins = '',
): string | undefined {
  return contentHash === undefined
    ? undefined
    : sha256Hex([contentHash, source, templatesVersion, code, ...(pins ? [pins] : [])].join('\0'));
}
