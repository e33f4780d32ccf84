import * as fs from 'node:fs';
import * as path from 'node:path';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { FileAsset } from '../../platform/aws/s3-publisher';
import type { SynthesizedStack } from './synthesize';

/** What a kept synthesis holds: the template and each asset's bytes, compressed (a template is ~65 KB of JSON). */
interface Kept {
  readonly fingerprint: string;
  readonly templateBody: Buffer;
  readonly assets: readonly { readonly asset: FileAsset; readonly name: string; readonly bytes: Buffer }[];
  /** Index in `assets` of the template itself when it goes through S3. */
  readonly templateAsset?: number;
  readonly size: number;
}

export interface KeptSynthesesProps {
  /** Compressed bytes kept at most; the least recently kept go first. @default 64 MiB (about 4,000 stacks of the examples: 10–25 KB each) */
  readonly maxBytes?: number;
}

/**
 * Syntheses made for a roll key whose reconcile ended before its change set (a cluster held for its wave, a window,
 * a slot): kept in memory per stack and inputs fingerprint, so that the change set, when the cluster is let go, reuses
 * the synthesis its roll key was read from instead of synthesizing again (issue 33, item 8: a held cluster costs no
 * synthesis beyond its change set's). The assembly itself is not kept: the work dir may be memory (/dev/shm) and a
 * held fleet is most of a fleet, so the template and the config object are kept compressed, and written back to the
 * work dir when taken.
 *
 * One owner: the process that made it (the daemon's wiring). An entry goes when it is taken (a synthesis is used
 * once), replaced (the stack's inputs changed), or evicted (the byte bound); a missed entry only costs a synthesis.
 */
export class KeptSyntheses {
  private readonly maxBytes: number;
  private readonly byStack = new Map<string, Kept>();
  private bytes = 0;

  constructor(props: KeptSynthesesProps = {}) {
    this.maxBytes = props.maxBytes ?? 64 * 1024 * 1024;
  }

  /** Compressed bytes held now (for tests and metrics). */
  get size(): number {
    return this.bytes;
  }

  /**
   * Keeps `synth`, made for `fingerprint`, while its files are still on disk. False (nothing kept) when an asset file is
   * gone (publish removed the assembly: the synthesis was used) or the entry alone exceeds the bound.
   */
  keep(synth: SynthesizedStack, fingerprint: string): boolean {
    this.drop(synth.stackName);
    let assets: Kept['assets'];
    try {
      assets = synth.assets.map((asset) => ({
        asset,
        name: path.basename(asset.sourcePath),
        bytes: deflateRawSync(fs.readFileSync(asset.sourcePath)),
      }));
    } catch {
      return false;
    }
    const templateBody = deflateRawSync(Buffer.from(synth.templateBody, 'utf8'));
    const size = templateBody.length + assets.reduce((n, a) => n + a.bytes.length, 0);
    if (size > this.maxBytes) return false;
    const templateAsset = synth.templateAsset ? synth.assets.indexOf(synth.templateAsset) : -1;
    this.byStack.set(synth.stackName, {
      fingerprint,
      templateBody,
      assets,
      ...(templateAsset >= 0 ? { templateAsset } : {}),
      size,
    });
    this.bytes += size;
    while (this.bytes > this.maxBytes) {
      const oldest = this.byStack.keys().next().value as string;
      this.drop(oldest);
    }
    return true;
  }

  /**
   * The synthesis kept for this stack and these inputs, its files written back under `dir` (the stack's assembly
   * directory, removed by whoever removes the assembly), and forgotten here; undefined when none is kept for them.
   */
  take(stackName: string, fingerprint: string, dir: string): SynthesizedStack | undefined {
    const kept = this.byStack.get(stackName);
    if (!kept) return undefined;
    this.drop(stackName);
    if (kept.fingerprint !== fingerprint) return undefined;
    fs.mkdirSync(dir, { recursive: true });
    const assets = kept.assets.map(({ asset, name, bytes }) => {
      const sourcePath = path.join(dir, name);
      fs.writeFileSync(sourcePath, inflateRawSync(bytes));
      return { ...asset, sourcePath };
    });
    return {
      stackName,
      templateBody: inflateRawSync(kept.templateBody).toString('utf8'),
      assets,
      ...(kept.templateAsset !== undefined ? { templateAsset: assets[kept.templateAsset] } : {}),
      durationMs: 0,
    };
  }

  /** Forgets what is kept for a stack (its cluster was deleted, or a synthesis of other inputs replaces it). */
  drop(stackName: string): void {
    const kept = this.byStack.get(stackName);
    if (!kept) return;
    this.byStack.delete(stackName);
    this.bytes -= kept.size;
  }
}
