import { getCondition } from '../../model/cluster/schema/status';
import { ClusterRecord } from '../../model/ports/cluster-store';
import { ChannelRelease, ChannelStatus, haltRelease } from '../../model/channel/channel-status';
import { ClusterRef, clusterRefOf, KnownChannel, pickRelease, rollsImage } from '../../model/channel/image-pins';
import { FAILED_ROLL_REASONS } from '../rollout/fleet';

/**
 * A cluster's failed image roll: Stalled or Degraded with a roll's failure reason (as the rollout gate counts one),
 * while a replacement for a new image was pending on it or one of its pools (status.pendingRoll's cause).
 */
function failedRoll(record: ClusterRecord): { at: string; why: string } | undefined {
  const s = record.status;
  const units = [s, ...(s?.pools ?? [])].filter((u) => u !== undefined);
  if (!units.some((u) => rollsImage(u.pendingRoll))) return undefined;
  for (const type of ['Stalled', 'Degraded'] as const) {
    const c = getCondition(record.status, type);
    if (c?.status === 'True' && FAILED_ROLL_REASONS.has(c.reason))
      return { at: c.lastTransitionTime, why: `${type} ${c.reason}: ${c.message}` };
  }
  // A stack whose image roll rolled back and that retries it (its failures are counted, not yet stopped), or whose
  // cluster's conditions speak of another stack (a pool's failed delete): its own facts say the roll failed. It was
  // pinned to the release it rolled to when that roll started (lastConfigChangeTime); the simulator found a release
  // never halted so.
  for (const u of units) {
    if (!rollsImage(u.pendingRoll) || !(u.controller?.failures ?? 0) || !u.lastConfigChangeTime) continue;
    if (!u.stackStatus || !/^UPDATE_ROLLBACK_(COMPLETE|FAILED)$/.test(u.stackStatus)) continue;
    return { at: u.lastConfigChangeTime, why: `stack ${u.stackStatus} after a roll to the image (${u.pendingRoll})` };
  }
  return undefined;
}

/**
 * The release a cluster in `region` was pinned to at time `t`: the newest one first seen by then that was neither
 * skipped nor halted then, under the cluster's ceiling (a hold or the promotion) as the spec says now. A failure is laid at that release's door only, so a halt never cascades to the release
 * before it (which the cluster was pinned to only after the halt).
 */
function pinnedAt(
  channel: KnownChannel,
  status: ChannelStatus,
  region: string,
  cluster: ClusterRef | undefined,
  t: number,
): ChannelRelease | undefined {
  // As the releases were at t: a halt of later than t had not happened yet.
  const then = status.releases
    .filter((r) => Date.parse(r.firstSeen) <= t && !(r.halted && Date.parse(r.halted.at) <= t))
    .map(({ halted: _later, ...r }) => r);
  const name = pickRelease({ ...channel, status: { ...status, releases: then } }, region, cluster)?.release;
  return status.releases.find((r) => r.release === name);
}

/**
 * Halts the release a failed roll went to: a cluster of the channel whose image roll failed halts the release it was
 * pinned to when it failed (unless an operator resumed that release since). Every cluster of the channel is then
 * pinned to the release before it (pickRelease skips a halted one): those that took the bad release roll back, in
 * their waves, as any roll; those that had not taken it never will. Level-based: read from the objects' conditions
 * alone, so a restarted daemon halts the same release. Conservative, as haltOnFailure is: a roll that replaced the
 * image and something else (a config) halts the release whichever failed (`channels resume` lifts it).
 */
export function haltFailedReleases(
  channel: KnownChannel,
  status: ChannelStatus,
  records: readonly ClusterRecord[],
  now: string,
): { status: ChannelStatus; halted: readonly string[] } {
  let next = status;
  const halted: string[] = [];
  for (const r of records) {
    const region = (r.raw as { spec?: { region?: unknown } } | undefined)?.spec?.region;
    if (typeof region !== 'string') continue;
    const failed = failedRoll(r);
    if (!failed) continue;
    const release = pinnedAt(channel, next, region, clusterRefOf(r.raw), Date.parse(failed.at));
    if (!release || release.halted) continue;
    if (release.resumedAt && Date.parse(failed.at) < Date.parse(release.resumedAt)) continue;
    next = haltRelease(next, release.release, `the roll of ${r.name} to it failed: ${failed.why}`, now);
    halted.push(`${release.release} (${r.name})`);
  }
  return { status: next, halted };
}
