import { ClusterStatus, getCondition } from '../../model/cluster/schema/status';
import { DEFAULT_POOL } from '../../model/cluster/pools/pools';
import { createChannelStore, createStore, StoreOptions } from '../stores/registry';
import { Command } from 'commander';
import { ChannelPins, ChannelStore } from '../../engines/channels';
import { ClusterRef, clusterRefOf, imageResolver, rollsImage } from '../../model/channel/image-pins';
import { describeSelector } from '../../model/cluster/schema/selector';
import { resumeRelease } from '../../model/channel/channel-status';
import { formatProblem } from '../../core/errors';
import { SdkImageSource } from '../../platform/aws/sdk-image-source';
import { ClusterRecord } from '../../model/ports/cluster-store';
import { DirOptions, dirFlags, EXIT, inputDirs, Io } from './context';
import { storeFlags, storeOptions } from './store-flags';

/**
 * `worker-stacks channels status|refresh`: the image channels beside the objects (`<clusters>/image-channels/`).
 * status reads only (the releases recorded and each pool's pin); refresh does what the daemon does once a poll: reads
 * each channel's source in the regions of the clusters that name it and records new releases (AWS reads only: SSM
 * GetParameter, EC2 DescribeImages; it writes the channels' status files, nothing in AWS).
 */
export function registerChannels(program: Command, io: Io, done: (code: number) => void): void {
  const channels = program
    .command('channels')
    .description('image channels (<clusters>/image-channels/): the releases recorded and the pools pinned to them');
  const where = (opts: DirOptions) => storeOptions(opts, inputDirs(opts));
  storeFlags(dirFlags(channels.command('status')))
    .description(
      'each channel: its releases (newest last, halted and skipped marked) and the pools pinned (reads only)',
    )
    .action(async (opts: DirOptions) =>
      done(await withChannels(where(opts), io, (c) => statusCommand(where(opts), c, io))),
    );
  storeFlags(dirFlags(channels.command('resume <channel> <release>')))
    .description('lift the halt of a release (a failed roll halted it): clusters are pinned to it again')
    .action(async (channel: string, release: string, opts: DirOptions) =>
      done(await withChannels(where(opts), io, (c) => resumeCommand(c, channel, release, io))),
    );
  storeFlags(dirFlags(channels.command('refresh')))
    .description("read each channel's source now, in the regions of its clusters, and record new releases")
    .action(async (opts: DirOptions) =>
      done(await withChannels(where(opts), io, (c) => refreshCommand(where(opts), c, io))),
    );
}

/** Runs `f` on the store's channels (the files beside the objects, or the custom resources), closing them after. */
async function withChannels(where: StoreOptions, io: Io, f: (c: ChannelStore) => Promise<number>): Promise<number> {
  const store = createChannelStore(where);
  if (!store) {
    io.err(`error: --store ${where.kind} keeps no image channels\n`);
    return EXIT.usage;
  }
  try {
    return await f(store);
  } finally {
    store.close?.();
  }
}

async function statusCommand(where: StoreOptions, store: ChannelStore, io: Io): Promise<number> {
  const loaded = await store.load();
  for (const p of loaded.problems) io.err(`${formatProblem(p)}\n`);
  const resolve = imageResolver(loaded.channels);
  const all = await records(where);
  const pinned = pinsOf(all);
  const statuses = new Map(all.map((r) => [r.name, r.status]));
  for (const c of loaded.channels) {
    io.out(`channel ${c.name}${c.spec ? '' : ' (invalid: see above)'}\n`);
    const skipped = new Set(c.spec?.skipReleases ?? []);
    const promoted = c.spec?.promotedRelease;
    const promotedAt = c.status.releases.findIndex((r) => r.release === promoted);
    if (promoted !== undefined)
      io.out(`  promoted by hand to ${promoted}${promotedAt < 0 ? ' (not recorded: nothing is pinned)' : ''}\n`);
    (c.spec?.holds ?? []).forEach((h, i) =>
      io.out(
        `  spec.holds[${i}] holds ${h.clusters ? h.clusters.join(', ') : describeSelector(h.selector) || '(every cluster)'} at ${h.release}\n`,
      ),
    );
    c.status.releases.forEach((r, i) => {
      const regions = Object.entries(r.images)
        .flatMap(([region, i]) => (i ? [[region, i] as const] : []))
        .map(([region, i]) => `${region} ${i.imageId}${i.deprecationTime ? ` (deprecated ${i.deprecationTime})` : ''}`)
        .join(', ');
      const mark = r.halted
        ? `  HALTED ${r.halted.at}: ${r.halted.reason}`
        : skipped.has(r.release)
          ? '  skipped'
          : promoted !== undefined && i > promotedAt
            ? '  not promoted'
            : '';
      io.out(`  release ${r.release}  first seen ${r.firstSeen}  ${regions}${mark}\n`);
    });
    for (const p of c.status.problems) io.out(`  problem (${p.region}): ${p.message}\n`);
    for (const use of pinned.filter((u) => u.channel === c.name)) {
      const pin = resolve(c.name, use.region, use.ref);
      const where = `${use.cluster} pool ${use.pool} (${use.region})`;
      const state = 'problem' in pin ? '' : `  ${rollState(statuses.get(use.cluster), use.pool)}`;
      io.out(`  ${where}: ${'problem' in pin ? pin.problem : `${pin.release} ${pin.imageId}`}${state}\n`);
    }
  }
  if (loaded.channels.length === 0)
    io.out(
      `no image channels ${where.kind === 'file' ? `in ${where.options.clustersDir}/image-channels` : `in --store ${where.kind}`}\n`,
    );
  return loaded.problems.length ? EXIT.invalid : EXIT.ok;
}

async function resumeCommand(store: ChannelStore, channel: string, release: string, io: Io): Promise<number> {
  const all = (await store.load()).channels;
  const known = all.find((c) => c.name === channel);
  const next = known && resumeRelease(known.status, release, new Date().toISOString());
  if (!known || !next) {
    const names = known ? known.status.releases.map((r) => r.release) : all.map((c) => c.name);
    io.err(
      `error: ${known ? `channel ${channel} has no release ${JSON.stringify(release)}` : `no image channel ${JSON.stringify(channel)}`}\n  fix: give one of: ${names.join(', ') || '(none)'} (worker-stacks channels status lists them)\n`,
    );
    return EXIT.usage;
  }
  await store.writeStatus(channel, next);
  io.out(`resumed ${channel} release ${release}: a roll that fails from now on halts it again\n`);
  return EXIT.ok;
}

async function refreshCommand(where: StoreOptions, store: ChannelStore, io: Io): Promise<number> {
  const pins = new ChannelPins({ store, source: new SdkImageSource(), now: () => new Date() });
  const report = await pins.refresh(await records(where));
  for (const r of report.recorded) io.out(`recorded ${r}\n`);
  for (const p of report.problems) io.err(`${p}\n`);
  for (const h of report.halted) io.err(`halted ${h}\n`);
  for (const w of report.warnings) io.err(`warning: ${w}\n`);
  io.err(`read ${report.reads} source(s); ${report.recorded.length} new release(s)\n`);
  return report.problems.length ? EXIT.invalid : EXIT.ok;
}

/** The objects as the daemon lists them (raw: an invalid object still names its channels and region), with status. */
async function records(where: StoreOptions): Promise<ClusterRecord[]> {
  const opened = createStore(where);
  try {
    return await opened.store.list();
  } finally {
    opened.close();
  }
}

/**
 * Whether the pool runs its pin or waits for it, and why: an image roll pending on it (status.pendingRoll, the
 * pool's own for a pool with its own stack) waits for what the cluster's Ready condition says (a wave, a window, a
 * slot, a roll under way).
 */
function rollState(status: ClusterStatus | undefined, pool: string): string {
  const pending =
    pool === DEFAULT_POOL && status?.pendingRoll !== undefined
      ? status.pendingRoll
      : status?.pools?.find((p) => p.name === pool)?.pendingRoll;
  const ready = getCondition(status, 'Ready');
  if (rollsImage(pending))
    return `waits (${pending}): ${ready ? `${ready.reason}: ${ready.message}` : 'not reconciled yet'}`;
  if (ready?.status === 'True') return 'runs it';
  return ready ? `not Ready (${ready.reason}): ${ready.message}` : 'not reconciled yet';
}

/**
 * Each pool that names a channel, by cluster, read from the raw objects: a pool whose channel has no release yet is
 * refused by validation, and is exactly the one to show.
 */
function pinsOf(
  all: readonly ClusterRecord[],
): { cluster: string; pool: string; channel: string; region: string; ref?: ClusterRef }[] {
  return all.flatMap((r) => {
    const spec = (r.raw as { spec?: { region?: unknown; pool?: unknown; pools?: unknown } } | undefined)?.spec;
    if (typeof spec?.region !== 'string') return [];
    const region = spec.region;
    const ref = clusterRefOf(r.raw);
    const pools: { name?: unknown; imageChannel?: unknown }[] = [
      ...(spec.pool ? [{ ...spec.pool, name: DEFAULT_POOL }] : []),
      ...(Array.isArray(spec.pools) ? (spec.pools as { name?: unknown }[]) : []),
    ];
    return pools.flatMap((p) =>
      typeof p.imageChannel === 'string' && typeof p.name === 'string'
        ? [{ cluster: r.name, pool: p.name, channel: p.imageChannel, region, ref }]
        : [],
    );
  });
}
