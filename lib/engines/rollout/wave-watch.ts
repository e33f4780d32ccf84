import { Fleet, some } from './gate';
import { PolicyEvent, policyEvent, PolicyRef, policyRef } from './policy-events';
import { PolicyView, WaveState, WaveView, waveViews } from './wave-state';

/**
 * Compares each look at the fleet with the one before (in memory: a restarted daemon starts from nothing, see
 * below) and says what changed for people and for the work queue:
 *
 * - **events** on the policy: a wave started, rolled and soaks, settled, halted; the policy paused or resumed;
 * - **clusters to wake**: the held clusters a change can release, so they are looked at now rather than at their
 *   recheck (the gate's RECHECK_MS stays the safety net): when a wave's rolls end (it soaks: the next wave learns when
 *   the soak ends and is requeued for exactly then), settles, or its halt lifts, the waiting clusters of that wave and
 *   of the next wave that is not settled; when a roll of a wave ends and others of the wave wait for a slot, as many of
 *   those as slots freed; on a resume, every waiting cluster of the policy;
 * - **nextAt**: when the next soak ends, so that the daemon looks again then even if no cluster is due.
 *
 * The first look after a start has nothing to compare with: it wakes nobody (the daemon's first pass looks at every
 * cluster) and says where each wave is that is not at rest (a rolling wave "started", a halted one "halted", a paused
 * policy "paused"), so a restart may repeat an event once, never lose a wave's state.
 */
export interface WaveWatchResult {
  readonly events: ReadonlyArray<{ readonly policy: PolicyRef; readonly event: PolicyEvent }>;
  readonly wake: readonly string[];
  readonly nextAt?: number;
}

interface WaveMemory {
  readonly state: WaveState;
  /** A WaveStarted was said since the wave was last settled or halted (a wave that pauses for a window starts once). */
  readonly started: boolean;
  readonly rolling: ReadonlySet<string>;
}

interface PolicyMemory {
  readonly paused: boolean;
  readonly waves: ReadonlyMap<string, WaveMemory>;
}

const IN_FLIGHT = new Set<WaveState>(['rolling', 'soaking']);
/** A wave leaving these can release clusters held behind it. */
const RELEASING = new Set<WaveState>(['rolling', 'soaking', 'halted']);

/**
 * A cluster woken for a freed slot is not woken again for another slot within this long: its reconcile, queued, has
 * not had the chance to start its roll yet, and the next freed slot goes to the next waiting cluster instead (without
 * this, every roll that ends in one look woke the same first waiting cluster, and the others waited for the recheck).
 */
export const WAKE_GRACE_MS = 60_000;

export class WaveWatch {
  private memory = new Map<string, PolicyMemory>();
  /** Clusters woken for a freed slot, and when. */
  private woken = new Map<string, number>();

  public observe(fleet: Fleet, now: Date): WaveWatchResult {
    const events: Array<{ policy: PolicyRef; event: PolicyEvent }> = [];
    const wake = new Set<string>();
    let nextAt: number | undefined;
    const next = new Map<string, PolicyMemory>();
    const t = now.getTime();
    for (const [n, at] of this.woken) if (t - at >= WAKE_GRACE_MS) this.woken.delete(n);
    for (const view of waveViews(fleet, now)) {
      const ref: PolicyRef = { name: view.policy.policy.metadata.name, namespace: view.policy.namespace };
      const key = policyRef(ref);
      const prev = this.memory.get(key);
      const say = (event: PolicyEvent) => events.push({ policy: ref, event });
      if (view.paused !== (prev?.paused ?? false)) {
        say(
          view.paused
            ? policyEvent(
                'RolloutPaused',
                `rollout policy ${key} is paused: no roll of its clusters starts; rolls under way finish (worker-stacks rollout resume ${key})`,
              )
            : policyEvent('RolloutResumed', `rollout policy ${key} is resumed: held rolls start as the waves allow`),
        );
        if (prev && !view.paused) for (const w of view.waves) w.pending.forEach((n) => wake.add(n));
      }
      const waves = new Map<string, WaveMemory>();
      for (const w of view.waves) {
        const was = prev?.waves.get(w.name);
        const said = transition(view, w, was, say);
        waves.set(w.name, { state: w.state, started: said.started, rolling: new Set(w.rolling) });
        if (w.state === 'soaking' && w.soakUntil !== undefined && w.soakUntil > now.getTime())
          nextAt = Math.min(nextAt ?? Infinity, w.soakUntil);
        if (!was) continue; // first look: nothing to compare with
        if (was.state !== w.state && w.state === 'halted') {
          // Halted (a roll of it or of an earlier wave failed): its waiting clusters say so now, not their old
          // WaitingForWave until the recheck.
          w.pending.forEach((n) => wake.add(n));
        } else if (was.state !== w.state && (RELEASING.has(was.state) || w.state === 'settled')) {
          // This wave's waiting clusters and the next wave that is not settled: a wave after that waits for it anyway
          // (and its own change of state, if any, wakes its clusters).
          for (const later of view.waves.slice(w.index)) {
            later.pending.forEach((n) => wake.add(n));
            if (later.index > w.index && later.state !== 'settled') break;
          }
        } else if (w.state !== 'halted') {
          // Slots of the wave freed by rolls that ended: as many of its waiting clusters (any of them may take one).
          const freed = [...was.rolling].filter((n) => !w.rolling.includes(n)).length;
          const next = w.pending.filter((n) => !this.woken.has(n) && !wake.has(n)).slice(0, freed);
          for (const n of next) {
            wake.add(n);
            this.woken.set(n, t);
          }
        }
      }
      next.set(key, { paused: view.paused, waves });
    }
    this.memory = next;
    return { events, wake: [...wake], ...(nextAt !== undefined ? { nextAt } : {}) };
  }
}

/** The events of one wave's change of state; whether a WaveStarted has been said for its current run. */
function transition(
  view: PolicyView,
  w: WaveView,
  was: WaveMemory | undefined,
  say: (e: PolicyEvent) => void,
): { started: boolean } {
  const wave = `wave ${w.name} (${w.index + 1} of ${w.of})`;
  const from = was?.state;
  let started = was?.started ?? false;
  if (w.state === from) return { started };
  // wave-state.ts: a wave is halted exactly when haltedBy is set.
  if (w.state === 'halted' && w.haltedBy) {
    const by = w.haltedBy;
    say(
      policyEvent(
        'WaveHalted',
        `${wave} is halted: the roll of ${by.name} failed (${by.why}); nothing more of it starts until that is fixed (worker-stacks rollout status; then worker-stacks retry ${by.name}, or a new config)`,
        w.name,
      ),
    );
    return { started: false };
  }
  if (IN_FLIGHT.has(w.state) && !started) {
    if (w.state === 'soaking' && from === undefined) {
      say(soakingEvent(wave, w));
      return { started: true };
    }
    const what = w.rolling.length ? `${some(w.rolling)} rolling` : `${some(w.soaking)} rolled`;
    say(
      policyEvent(
        'WaveStarted',
        `${wave} started: ${what}; ${w.size} cluster${w.size === 1 ? '' : 's'} in the wave`,
        w.name,
      ),
    );
    started = true;
  }
  if (w.state === 'soaking' && from !== undefined) say(soakingEvent(wave, w));
  if (w.state === 'settled' && started) {
    const after = view.waves.at(w.index + 1);
    say(
      policyEvent(
        'WaveSettled',
        `${wave} settled: every cluster on its new config${w.soak === '0s' ? '' : `, soaked ${w.soak}`}${after ? `; wave ${after.name} may start` : '; the rollout is complete'}`,
        w.name,
      ),
    );
    started = false;
  }
  return { started };
}

function soakingEvent(wave: string, w: WaveView): PolicyEvent {
  return policyEvent(
    'WaveSoaking',
    `${wave} rolled: ${some(w.soaking)} on the new config; it soaks ${w.soak}${w.soakUntil === undefined ? '' : `, until ${new Date(w.soakUntil).toISOString()}`}`,
    w.name,
  );
}
