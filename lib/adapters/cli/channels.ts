import { ClusterStatus, getCondition } from '../../model/cluster/status';
import { DEFAULT_POOL } from '../../model/cluster/pools';
import { createStore, fileStore } from '../stores/registry';
import * as path from 'node:path';
import { Command } from 'commander';
import { ChannelPins, FileChannelStore } from '../../engines/channels';
import { ClusterRef, clusterRefOf, imageResolver, rollsImage } from '../../model/channel/image-pins';
import { describeSelector } from '../../model/cluster/selector';
import { resumeRelease } from '../../model/channel/channel-status';
import { clusterFiles, parseClusterYaml, readClusterFile } from '../../model/cluster/load';
import { formatProblem } from '../../core/errors';
import { SdkImageSource } from '../../platform/aws/sdk-image-source';
import { ClusterRecord } from '../../model/ports/cluster-store';
import { DirOptions, dirFlags, EXIT, inputDirs, InputDirs, Io } from './context';

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
  dirFlags(channels.command('status'))
    .description(
      'each channel: its releases (newest last, halted and skipped marked) and the pools pinned (reads only)',
    )
    .action(async (opts: DirOptions) => done(await statusCommand(inputDirs(opts), io)));
  dirFlags(channels.command('resume <channel> <release>'))
    .description('lift the halt of a release (a failed roll halted it): clusters are pinned to it again')
    .action(async (channel: string, release: string, opts: DirOptions) =>
      done(await resumeCommand(inputDirs(opts), channel, release, io)),
    );
  dirFlags(channels.command('refresh'))
    .description("read each channel's source now, in the regions of its clusters, and record new releases")
    .action(async (opts: DirOptions) => done(await refreshCommand(inputDirs(opts), io)));
}

export async function statusCommand(dirs: InputDirs, io: Io): Promise<number> {
  const loaded = new FileChannelStore({ clustersDir: dirs.clustersDir }).loadSync();
  for (const p of loaded.problems) io.err(`${formatProblem(p)}\n`);
  const resolve = imageResolver(loaded.channels);
  const pinned = pinsOf(dirs);
  const statuses = await clusterStatuses(dirs);
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
  if (loaded.channels.length === 0) io.out(`no image channels in ${dirs.clustersDir}/image-channels\n`);
  return loaded.problems.length ? EXIT.invalid : EXIT.ok;
}

export async function resumeCommand(dirs: InputDirs, channel: string, release: string, io: Io): Promise<number> {
  const store = new FileChannelStore({ clustersDir: dirs.clustersDir });
  const known = store.loadSync().channels.find((c) => c.name === channel);
  const next = known && resumeRelease(known.status, release, new Date().toISOString());
  if (!known || !next) {
    const names = known ? known.status.releases.map((r) => r.release) : store.loadSync().channels.map((c) => c.name);
    io.err(
      `error: ${known ? `channel ${channel} has no release ${JSON.stringify(release)}` : `no image channel ${JSON.stringify(channel)}`}\n  fix: give one of: ${names.join(', ') || '(none)'} (worker-stacks channels status lists them)\n`,
    );
    return EXIT.usage;
  }
  await store.writeStatus(channel, next);
  io.out(`resumed ${channel} release ${release}: a roll that fails from now on halts it again\n`);
  return EXIT.ok;
}

export async function refreshCommand(dirs: InputDirs, io: Io): Promise<number> {
  const store = new FileChannelStore({ clustersDir: dirs.clustersDir });
  const pins = new ChannelPins({ store, source: new SdkImageSource(), now: () => new Date() });
  const report = await pins.refresh(records(dirs));
  for (const r of report.recorded) io.out(`recorded ${r}\n`);
  for (const p of report.problems) io.err(`${p}\n`);
  for (const h of report.halted) io.err(`halted ${h}\n`);
  for (const w of report.warnings) io.err(`warning: ${w}\n`);
  io.err(`read ${report.reads} source(s); ${report.recorded.length} new release(s)\n`);
  return report.problems.length ? EXIT.invalid : EXIT.ok;
}

/** The objects as the daemon lists them (raw: an invalid object still names its channels and region). */
function records(dirs: InputDirs): ClusterRecord[] {
  return clusterFiles(dirs.clustersDir).flatMap((file) => {
    const read = readClusterFile(file);
    if (read.problem) return [];
    const { raw } = parseClusterYaml(read.text, file);
    const name = path.basename(file).replace(/\.ya?ml$/, '');
    return [{ name, source: file, raw, parseProblems: [], generation: 0, resourceVersion: '' }];
  });
}

/** The recorded status of every cluster of the file store, by name (nothing is read from AWS). */
async function clusterStatuses(dirs: InputDirs): Promise<ReadonlyMap<string, ClusterStatus | undefined>> {
  const opened = createStore(fileStore(dirs.clustersDir));
  try {
    return new Map((await opened.store.list()).map((r) => [r.name, r.status]));
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
  dirs: InputDirs,
): { cluster: string; pool: string; channel: string; region: string; ref?: ClusterRef }[] {
  return records(dirs).flatMap((r) => {
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
