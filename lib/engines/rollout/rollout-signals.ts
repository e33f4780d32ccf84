import type { Logger } from '../../core/logger';
import { Fleet } from './gate';
import { policyRef } from './policy-events';
import { RolloutPolicySource } from './policy-source';
import { WaveWatch } from './wave-watch';

export interface RolloutSignalsProps {
  readonly log: Logger;
  /** Where events on a policy go (the Kubernetes store's objects); every event is a JSON log line as well. */
  readonly source: RolloutPolicySource;
  readonly now: () => Date;
  /** Looks at the fleet again (when a soak ends); its snapshot comes back through observe(). */
  readonly look: () => Promise<unknown>;
}

/**
 * What the daemon does with each look at the fleet (wave-watch.ts): logs every policy event as a JSON line (`event`
 * is the reason) and posts it on the policy object where the store has one; tells its subscribers (the work queue)
 * which held clusters to look at now; and looks again when the next soak ends, so the wave's end is seen then even
 * if no cluster is due. Events are deduplicated in memory only: a restarted daemon may say a wave's state once more.
 */
export class RolloutSignals {
  private readonly waves = new WaveWatch();
  private readonly listeners = new Set<(names: readonly string[]) => void>();
  private timer?: NodeJS.Timeout;
  private timerAt?: number;

  constructor(private readonly props: RolloutSignalsProps) {}

  public observe(fleet: Fleet): void {
    const { log } = this.props;
    let seen: ReturnType<WaveWatch['observe']>;
    try {
      seen = this.waves.observe(fleet, this.props.now());
    } catch (e) {
      // A look that cannot be read wakes nobody: the rechecks and the resync still do.
      log.warn({ err: String(e) }, 'fleet rollout: could not compare the waves with the last look');
      return;
    }
    for (const { policy, event } of seen.events) {
      const line = {
        policy: policyRef(policy),
        ...(event.wave ? { wave: event.wave } : {}),
        event: event.reason,
        type: event.type,
      };
      if (event.type === 'Warning') log.warn(line, event.message);
      else log.info(line, event.message);
      this.props.source
        .emit?.(policy, event)
        .catch((e: unknown) => log.warn({ ...line, err: String(e) }, 'could not post the event on the rollout policy'));
    }
    if (seen.wake.length && this.listeners.size) {
      log.info({ clusters: seen.wake.length }, 'fleet rollout: a wave moved; looking at its held clusters now');
      for (const l of this.listeners) l(seen.wake);
    }
    this.schedule(seen.nextAt);
  }

  /** `listener` gets the held clusters to look at now. Returns the unsubscribe (the last one stops the soak timer). */
  public onWake(listener: (names: readonly string[]) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.schedule(undefined);
    };
  }

  private schedule(at: number | undefined): void {
    if (at === this.timerAt && (at === undefined || this.timer)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = undefined;
    if (at === undefined || this.listeners.size === 0) return;
    this.timerAt = at;
    // A second after the soak's end: the look then sees it ended.
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = undefined;
        this.props
          .look()
          .catch((e: unknown) =>
            this.props.log.warn({ err: String(e) }, 'fleet rollout: could not look at the fleet at the end of a soak'),
          );
      },
      Math.max(0, at - this.props.now().getTime()) + 1000,
    );
    this.timer.unref();
  }
}
