import { RollbackConfiguration, StackEvent } from '../../../model/ports/cloudformation-port';
import { ClusterSpec } from '../../../model/cluster/schema/schema';

/** The change set's RollbackConfiguration from spec.rollout: the same alarms on every update of the stack. */
export function rollbackConfiguration(rollout: ClusterSpec['rollout']): RollbackConfiguration {
  return { alarmArns: [...rollout.rollbackAlarms], monitoringTimeMinutes: rollout.monitoringTimeMinutes };
}

/**
 * How many nodes did not come up, as CloudFormation's own events say it (an operator reads "2 of 2 nodes did not
 * signal", not a resource status): "Received 0 SUCCESS signal(s) out of 2. Unable to satisfy 100%
 * MinSuccessfulInstancesPercent requirement" (a rolling update's batch), "Received 1 FAILURE signal(s) out of 2 ..."
 * and "Failed to receive 2 resource signal(s) within the specified duration" (creation, or signals that never came).
 * Undefined when no event speaks of signals.
 */
export function signalShortfall(events: readonly StackEvent[]): string | undefined {
  for (const e of events) {
    const reason = e.reason ?? '';
    const success = /Received (\d+) SUCCESS signal\(s\) out of (\d+)/i.exec(reason);
    if (success) {
      const [ok, of] = [Number(success[1]), Number(success[2])];
      return `${of - ok} of ${of} nodes did not signal SUCCESS (${e.logicalId}: ${reason.trim()})`;
    }
    const failure = /Received (\d+) FAILURE signal\(s\) out of (\d+)/i.exec(reason);
    if (failure) return `${failure[1]} of ${failure[2]} nodes signalled FAILURE (${e.logicalId}: ${reason.trim()})`;
    const missing = /Failed to receive (\d+) resource signal\(s\)/i.exec(reason);
    if (missing)
      return `${missing[1]} node${missing[1] === '1' ? '' : 's'} did not signal within the pause time (${e.logicalId}: ${reason.trim()})`;
  }
  return undefined;
}

/** A rollback started by one of the rollback alarms: CloudFormation names the alarm in the stack's event. */
export function alarmRollback(events: readonly StackEvent[]): string | undefined {
  const e = events.find(
    (x) =>
      /alarm/i.test(x.reason ?? '') &&
      /ROLLBACK|FAILED/.test(x.status) &&
      /arn:aws[a-z-]*:cloudwatch:/.test(x.reason ?? ''),
  );
  return e?.reason ? `a rollback alarm fired (${e.reason.trim()})` : undefined;
}
