import { ChannelPins, ChannelStore } from '../../lib/engines/channels';
import { WorkerImageChannelSchema } from '../../lib/model/channel/channel-schema';
import { ChannelStatus, EMPTY_CHANNEL_STATUS, resumeRelease } from '../../lib/model/channel/channel-status';
import { clusterRefOf, ImageResolver, imageResolver } from '../../lib/model/channel/image-pins';
import { FakeImageSource } from '../fakes/fake-image-source';

/** The channel every pool of a channel world names (WorldOptions.channel). */
export const CHANNEL = 'sim-al2023';
/** Its source: an SSM parameter in the clusters' region (the example object's). */
const PARAMETER = '/sim/al2023/image_id';
const REGION = 'us-east-1';

const SPEC = WorkerImageChannelSchema.parse({
  apiVersion: 'worker-stacks.io/v1alpha1',
  kind: 'WorkerImageChannel',
  metadata: { name: CHANNEL },
  spec: { source: { ssmParameter: PARAMETER }, architecture: 'x86_64', owners: ['amazon'] },
}).spec;

/** The AMI id of the channel's release `n` (the world's n-th publish). */
export const channelImage = (n: number): string => `ami-0c${String(n).padStart(15, '0')}`;
/** The image name EC2 reports for it: what the channel records as the release's name. */
export const channelRelease = (n: number): string => `sim-al2023-v${n}`;

/**
 * The image channel of a channel world: the source (an SSM parameter and the images EC2 describes, a FakeImageSource:
 * AWS, it survives every restart), the channel's status (the store's: it survives restarts too), and what the world
 * published, bad releases included. Each process reads it through its own ChannelPins (sim-process.ts), refreshed at
 * the start of each of its passes as runDaemon's PassBook does; the status store's calls wait for the scheduler.
 */
export class SimChannel {
  public readonly source = new FakeImageSource();
  /** The channel's status as the store holds it (the truth every process loads). */
  public status: ChannelStatus = EMPTY_CHANNEL_STATUS;
  /** Bumped at every write (the memo of the truth's resolver). */
  public version = 0;
  /** Every image published, oldest first: release n is images[n]. */
  public readonly images: string[] = [];
  /** Images whose stacks fail (badRelease): an update or create applying one rolls back. */
  public readonly bad = new Set<string>();
  /** Called after each status write, by the writing process (the invariants read the halts in it). */
  public onWrite?: (status: ChannelStatus, pid: number | undefined) => void;
  private resolverMemo?: { version: number; resolve: ImageResolver };
  /** The status version when each stack's last execute was issued (before it waited for its turn). */
  public readonly issuedAt = new Map<string, number>();

  /** An execute on `stack` is issued now: a halt written after this and before the call lands did not exist for it. */
  public issued(stack: string): void {
    this.issuedAt.set(stack, this.version);
  }

  /** A new release: its image in EC2 (owned by amazon, x86_64) and the parameter moved to it. */
  public publish(bad = false): number {
    const n = this.images.length;
    const imageId = channelImage(n);
    this.images.push(imageId);
    if (bad) this.bad.add(imageId);
    this.source.addImage(REGION, {
      imageId,
      name: channelRelease(n),
      architecture: 'x86_64',
      ownerId: '137112412989',
      ownerAlias: 'amazon',
    });
    this.source.setParameter(REGION, PARAMETER, imageId);
    return n;
  }

  /** The release (its index) an image is, or undefined: not one of the channel's. */
  public releaseOf(imageId: string | undefined): number | undefined {
    if (imageId === undefined) return undefined;
    const i = this.images.indexOf(imageId);
    return i >= 0 ? i : undefined;
  }

  /** `channels resume` of the newest halted release (an operator's write). Returns the release, or undefined: none halted. */
  public resume(now: Date): number | undefined {
    const halted = [...this.status.releases].reverse().find((r) => r.halted);
    if (!halted) return undefined;
    const next = resumeRelease(this.status, halted.release, now.toISOString());
    if (next) this.write(next, undefined);
    return this.releaseOf(halted.images[REGION]?.imageId);
  }

  /** The pins the channel's status gives now (as imageResolver over the store's truth). */
  public resolver(): ImageResolver {
    if (this.resolverMemo?.version !== this.version)
      this.resolverMemo = {
        version: this.version,
        resolve: imageResolver([{ name: CHANNEL, spec: SPEC, status: this.status }]),
      };
    return this.resolverMemo.resolve;
  }

  /**
   * An object as the reconciler validates it under `resolve` (the truth's pins by default): each pool that names the
   * channel gets the pinned release's literal image instead (unchanged when it cannot be pinned: then it is invalid).
   */
  public pinned(raw: unknown, resolve: ImageResolver = this.resolver()): unknown {
    type Pool = Record<string, unknown>;
    const r = raw as { spec?: { region?: string; pool?: Pool; pools?: Pool[] } } | undefined;
    const spec = r?.spec;
    if (!spec) return raw;
    const pools = [spec.pool, ...(spec.pools ?? [])].filter((p): p is Pool => p !== undefined);
    if (!pools.some((p) => p.imageChannel === CHANNEL)) return raw;
    const pin = resolve(CHANNEL, spec.region ?? '', clusterRefOf(raw));
    if ('problem' in pin) return raw;
    const pinPool = (p: Pool): Pool => {
      if (p.imageChannel !== CHANNEL) return p;
      const { imageChannel: _channel, ...rest } = p;
      return { ...rest, machineImage: pin.imageId };
    };
    return {
      ...r,
      spec: {
        ...spec,
        ...(spec.pool ? { pool: pinPool(spec.pool) } : {}),
        ...(spec.pools ? { pools: spec.pools.map(pinPool) } : {}),
      },
    };
  }

  /** The ChannelPins of one process: the shared source, the status store through the process's scheduler gate. */
  public pinsFor(pid: number, gate: (label: string) => Promise<void>, now: () => Date): ChannelPins {
    const store: ChannelStore = {
      load: async () => {
        await gate('channels.load');
        return {
          channels: [{ name: CHANNEL, source: `image-channels/${CHANNEL}.yaml`, spec: SPEC, status: this.status }],
          problems: [],
        };
      },
      writeStatus: async (name, status) => {
        // The gate throws for a process that died while it waited (CrashSignal), as every store call does.
        await gate('channels.writeStatus');
        if (name === CHANNEL) this.write(status, pid);
      },
    };
    const pins = new ChannelPins({ store, source: this.source, now });
    // The pins before the last refresh: a reconcile in hand when the refresh came derived its inputs with them.
    const refresh = pins.refresh.bind(pins);
    pins.refresh = async (records) => {
      const before = pins.resolver();
      const report = await refresh(records);
      if (pins.resolver() !== before) PREVIOUS.set(pins, before);
      return report;
    };
    return pins;
  }

  /** The pins a process's reconciles may hold now: those of its last refresh, and those of the one before. */
  public static pinsOf(pins: ChannelPins): readonly ImageResolver[] {
    const previous = PREVIOUS.get(pins);
    return previous ? [pins.resolver(), previous] : [pins.resolver()];
  }

  private write(status: ChannelStatus, pid: number | undefined): void {
    this.status = status;
    this.version++;
    this.onWrite?.(status, pid);
  }
}

const PREVIOUS = new WeakMap<ChannelPins, ImageResolver>();

/** The image a template's launch template names (undefined: none, or not one of ours), memoized. */
export function imageOfTemplate(body: string | undefined): string | undefined {
  if (!body) return undefined;
  let hit = IMAGES.get(body);
  if (hit === undefined) {
    const t = JSON.parse(body) as {
      Resources?: Partial<Record<string, { Properties?: { LaunchTemplateData?: { ImageId?: unknown } } }>>;
    };
    const id = t.Resources?.LaunchTemplate?.Properties?.LaunchTemplateData?.ImageId;
    hit = typeof id === 'string' ? id : null;
    if (IMAGES.size > 10_000) IMAGES.clear();
    IMAGES.set(body, hit);
  }
  return hit ?? undefined;
}
const IMAGES = new Map<string, string | null>();
