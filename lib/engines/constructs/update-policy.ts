import { Duration } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';

export interface InstanceRefreshProps {
  /** @default 100 */
  readonly minHealthyPercentage?: number;
  /** Above 100: new nodes before old ones go. @default 110 */
  readonly maxHealthyPercentage?: number;
  /** @default the group's health check grace period */
  readonly instanceWarmupSeconds?: number;
  /** Ascending, the last one 100. @default none */
  readonly checkpoints?: readonly number[];
  /** @default 3600 with checkpoints */
  readonly checkpointDelaySeconds?: number;
  /** @default 0 */
  readonly bakeTimeSeconds?: number;
  /** CloudWatch alarm names that fail the refresh. @default none */
  readonly alarms?: readonly string[];
  /** @default true */
  readonly skipMatching?: boolean;
}

export interface RollingUpdateProps {
  /** rolling: AutoScalingRollingUpdate; instanceRefresh: AutoScalingInstanceRefresh. @default 'rolling' */
  readonly strategy?: 'rolling' | 'instanceRefresh';
  /** Instances replaced at a time. @default 1 */
  readonly maxBatchSize?: number;
  /** Instances kept in service while replacing. @default 0 */
  readonly minInstancesInService?: number;
  /** ISO 8601 pause after each batch. @default 'PT5M' */
  readonly pauseTime?: string;
  /** Wait for each new instance to signal (rolling); also makes the group's creation wait (both strategies). @default true */
  readonly waitOnResourceSignals?: boolean;
  /** Share of a batch (and of the created group) that must signal SUCCESS. @default 100 */
  readonly minSuccessfulInstancesPercent?: number;
  /** Preferences of the instance refresh (strategy instanceRefresh). @default AWS defaults */
  readonly instanceRefresh?: InstanceRefreshProps;
}

/** The processes that would fight a rolling update (AWS recommends suspending them while it runs). */
export const SUSPENDED_DURING_ROLL = [
  autoscaling.ScalingProcess.HEALTH_CHECK,
  autoscaling.ScalingProcess.REPLACE_UNHEALTHY,
  autoscaling.ScalingProcess.AZ_REBALANCE,
  autoscaling.ScalingProcess.ALARM_NOTIFICATION,
  autoscaling.ScalingProcess.SCHEDULED_ACTIONS,
];

/** The group's update policy: a rolling update gated by node signals, or an instance refresh. */
export function updatePolicy(scope: Construct, ru: RollingUpdateProps): autoscaling.UpdatePolicy {
  if (ru.strategy === 'instanceRefresh') {
    const ir = ru.instanceRefresh ?? {};
    const seconds = (v: number | undefined) => (v === undefined ? undefined : Duration.seconds(v));
    return autoscaling.UpdatePolicy.instanceRefresh({
      strategy: autoscaling.InstanceRefreshStrategy.ROLLING,
      minHealthyPercentage: ir.minHealthyPercentage ?? 100,
      maxHealthyPercentage: ir.maxHealthyPercentage ?? 110,
      instanceWarmup: seconds(ir.instanceWarmupSeconds),
      skipMatching: ir.skipMatching ?? true,
      checkpointPercentages: ir.checkpoints?.length ? [...ir.checkpoints] : undefined,
      checkpointDelay: ir.checkpoints?.length ? seconds(ir.checkpointDelaySeconds) : undefined,
      bakeTime: seconds(ir.bakeTimeSeconds),
      alarms: ir.alarms?.length
        ? ir.alarms.map((name, i) => cloudwatch.Alarm.fromAlarmName(scope, `RefreshAlarm${i}`, name))
        : undefined,
    });
  }
  const wait = ru.waitOnResourceSignals ?? true;
  return autoscaling.UpdatePolicy.rollingUpdate({
    maxBatchSize: ru.maxBatchSize ?? 1,
    minInstancesInService: ru.minInstancesInService ?? 0,
    // With signals: how long each batch waits for them; without: the pause after each batch.
    pauseTime: Duration.parse(ru.pauseTime ?? 'PT10M'),
    waitOnResourceSignals: wait,
    minSuccessPercentage: wait ? (ru.minSuccessfulInstancesPercent ?? 100) : undefined,
    suspendProcesses: SUSPENDED_DURING_ROLL,
  });
}
