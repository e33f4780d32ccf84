import { ClusterRecord } from '../../model/ports/cluster-store';
import { getCondition } from '../../model/cluster/schema/status';
import { ceilingOf, channelsNamed, clusterRefOf, imageResolver, KnownChannel } from '../../model/channel/image-pins';
import { liveRelease } from './live-release';
import { Fleet, placeAll } from '../rollout/gate';
import { RolloutReport } from '../rollout/report';

/** Where one cluster of a channel is: on its pin, waiting for it, without one, or not read since it was deployed. */
export type ChannelClusterState = 'runs' | 'waits' | 'unpinned' | 'unknown';

export interface ChannelClusterLine {
  readonly cluster: string;
  readonly state: ChannelClusterState;
  /** The release it is pinned to (what it runs once its wave lets it). @default none: unpinned */
  readonly pinned?: string;
  /** The release its live stack runs, read from its live roll key (the oldest of its pools'). @default unknown */
  readonly runs?: string;
  /** The spec field that holds it below the channel's promotion (`spec.holds[0]`). @default not held */
  readonly heldBy?: string;
  /** Why it waits (the rollout's reason, or its Ready condition), or why it has no pin. @default none */
  readonly why?: string;
}

export interface ChannelWaveLine {
  /** The policy and wave that place it; undefined for clusters no policy governs. */
  readonly policy?: string;
  readonly wave?: string;
  readonly clusters: readonly ChannelClusterLine[];
}

export interface ChannelWavesReport {
  readonly channel: string;
  /** The newest release recorded (whatever its ceiling). @default none yet */
  readonly newest?: string;
  /** The release promoted by hand (spec.promotedRelease). @default none: each release as it is recorded */
  readonly promoted?: string;
  readonly halted: readonly string[];
  /** Waves in rollout order (policy by policy, first wave first), then the clusters no policy governs. */
  readonly waves: readonly ChannelWaveLine[];
}

/**
 * `rollout status` for image channels: per channel and wave, the release each cluster is pinned to, the one its live
 * stacks run, and why it waits. Read from the objects, their recorded status and the channels' recorded status only
 * (no AWS call): the same evidence the daemon decides on.
 */
export function channelWaves(
  fleet: Fleet,
  report: RolloutReport,
  records: readonly ClusterRecord[],
  channels: readonly KnownChannel[],
): ChannelWavesReport[] {
  const resolve = imageResolver(channels);
  const placements = placeAll(fleet).placements;
  const why = new Map<string, string>();
  for (const p of report.policies)
    for (const w of p.waves) for (const l of w.clusters) why.set(l.cluster, `${l.phase}${l.why ? `: ${l.why}` : ''}`);
  const policyOrder = fleet.policies.policies.map((p) => p.policy.metadata.name);
  return [...channels]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((channel) => {
      const on = records.filter((r) => channelsNamed(r.raw).includes(channel.name));
      if (on.length === 0) return [];
      const byWave = new Map<
        string,
        { policy?: string; wave?: string; order: number[]; clusters: ChannelClusterLine[] }
      >();
      for (const r of [...on].sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const at = placements.get(r.name);
        const key = at ? `${at.policy.policy.metadata.name}/${at.index}` : '';
        const row = byWave.get(key) ?? {
          ...(at ? { policy: at.policy.policy.metadata.name, wave: at.wave.name } : {}),
          order: at ? [policyOrder.indexOf(at.policy.policy.metadata.name), at.index] : [Number.MAX_SAFE_INTEGER, 0],
          clusters: [],
        };
        byWave.set(key, row);
        row.clusters.push(clusterLine(channel, r, resolve, why.get(r.name)));
      }
      const waves = [...byWave.values()]
        .sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1])
        .map(({ order: _order, ...w }) => w);
      const releases = channel.status.releases;
      return [
        {
          channel: channel.name,
          ...(releases.length ? { newest: releases[releases.length - 1].release } : {}),
          ...(channel.spec?.promotedRelease !== undefined ? { promoted: channel.spec.promotedRelease } : {}),
          halted: releases.filter((r) => r.halted).map((r) => r.release),
          waves,
        },
      ];
    });
}

function clusterLine(
  channel: KnownChannel,
  record: ClusterRecord,
  resolve: ReturnType<typeof imageResolver>,
  rolloutWhy: string | undefined,
): ChannelClusterLine {
  const region = (record.raw as { spec?: { region?: unknown } } | undefined)?.spec?.region;
  if (typeof region !== 'string') return { cluster: record.name, state: 'unpinned', why: 'the object names no region' };
  const ref = clusterRefOf(record.raw);
  const pin = resolve(channel.name, region, ref);
  const runs = liveRelease(channel, record, region);
  const ceiling = channel.spec && ceilingOf(channel.spec, ref);
  const held = ceiling?.by.startsWith('spec.holds') ? { heldBy: ceiling.by } : {};
  const base = { cluster: record.name, ...(runs ? { runs } : {}), ...held };
  if ('problem' in pin) return { ...base, state: 'unpinned', why: pin.problem };
  if (runs === pin.release) return { ...base, pinned: pin.release, state: 'runs' };
  const ready = getCondition(record.status, 'Ready');
  const because = rolloutWhy ?? (ready ? `${ready.reason}: ${ready.message}` : 'not reconciled yet');
  return {
    ...base,
    pinned: pin.release,
    state: runs || record.status?.controller?.rollKeys ? 'waits' : 'unknown',
    why: because,
  };
}

/** The text of `rollout status` for the channels: a line per wave, a line per cluster not on its pin. */
export function formatChannelWaves(reports: readonly ChannelWavesReport[]): string {
  const out: string[] = [];
  for (const c of reports) {
    const extra = [
      c.promoted !== undefined ? `promoted by hand to ${c.promoted}` : '',
      c.halted.length ? `halted: ${c.halted.join(', ')}` : '',
    ].filter(Boolean);
    out.push(
      `channel ${c.channel}: newest release ${c.newest ?? '(none recorded yet)'}${extra.length ? `; ${extra.join('; ')}` : ''}`,
    );
    for (const w of c.waves) {
      const counts = new Map<string, number>();
      for (const l of w.clusters) {
        const k =
          l.state === 'runs'
            ? `run ${l.pinned}`
            : l.state === 'waits'
              ? `wait for ${l.pinned}`
              : l.state === 'unknown'
                ? `pinned to ${l.pinned}, not read yet`
                : 'unpinned';
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
      const summary = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
      out.push(`  ${w.wave !== undefined ? `wave ${w.wave} (policy ${w.policy})` : 'no policy'}: ${summary}`);
      for (const l of w.clusters) {
        if (l.state === 'runs' && !l.heldBy) continue;
        const held = l.heldBy ? ` (held by ${l.heldBy})` : '';
        const line =
          l.state === 'runs'
            ? `runs ${l.pinned}${held}`
            : l.state === 'unpinned'
              ? `no pin: ${l.why}`
              : `${l.runs ? `runs ${l.runs}, ` : ''}waits for ${l.pinned}${held}: ${l.why}`;
        out.push(`    ${l.cluster}: ${line}`);
      }
    }
  }
  return out.length ? `${out.join('\n')}\n` : '';
}
