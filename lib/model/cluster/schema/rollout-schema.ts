import { z } from 'zod';
import { intIn, noTokens, pattern } from './rules';

/**
 * The parts of the object that say how a roll is gated and how gentle it is to workloads: node signals, the
 * instance-refresh strategy, drain before terminate, and the change set's rollback alarms. Fields only; the rules
 * that span them (what AWS refuses in combination) are in rollout-rules.ts.
 */

const d = (text: string) => ({ description: text });

/** The minimum time a node is given to report: its boot before the signal unit starts is counted on top. */
export const DEFAULT_NODE_READY_TIMEOUT_SECONDS = 540;
/** Boot time before the signal unit starts, which the group's PauseTime must leave on top of the node's own timeout. */
export const SIGNAL_BOOT_MARGIN_SECONDS = 60;

export const InstanceRefreshSchema = z
  .strictObject({
    minHealthyPercentage: intIn(0, 100, 'percentage')
      .default(100)
      .meta(d('Share of the desired capacity kept in service and healthy during the refresh. @default 100')),
    maxHealthyPercentage: intIn(100, 200, 'percentage')
      .default(110)
      .meta(
        d(
          'Share of the desired capacity that may be in service or pending: above 100, new nodes come up before old ones go (surge); at most 100 above minHealthyPercentage. @default 110',
        ),
      ),
    instanceWarmupSeconds: intIn(0, 3600, 'warm-up in seconds')
      .optional()
      .meta(
        d(
          "Seconds after a new node is InService before the next is replaced. @default the group's health check grace period",
        ),
      ),
    checkpoints: z
      .array(intIn(1, 100, 'checkpoint percentage'))
      .max(10)
      .default([])
      .meta(
        d(
          'Percentages of the group replaced at which the refresh pauses for checkpointDelaySeconds; ascending, unique, the last one 100. @default [] (no checkpoints)',
        ),
      ),
    checkpointDelaySeconds: intIn(0, 172800, 'checkpoint delay in seconds')
      .optional()
      .meta(d('Pause at each checkpoint (only with checkpoints). @default 3600')),
    bakeTimeSeconds: intIn(0, 172800, 'bake time in seconds')
      .default(0)
      .meta(
        d(
          'After the refresh completes, the time CloudFormation waits (watching the alarms) before it calls the update successful. @default 0',
        ),
      ),
    alarms: z
      // eslint-disable-next-line no-control-regex -- the class names the control characters an alarm name may not hold
      .array(noTokens(pattern(/^[^\0-\x1f]{1,255}$/, 'a CloudWatch alarm name (1-255 characters)')))
      .default([])
      .meta(
        d(
          'Names of CloudWatch alarms (in the cluster account and region, at most 10); one in ALARM fails the refresh and rolls the stack back. @default []',
        ),
      ),
    skipMatching: z
      .boolean()
      .default(true)
      .meta(d('Leave nodes that already run the desired launch template. @default true')),
  })
  .meta(d('AutoScalingInstanceRefresh preferences; only with strategy instanceRefresh.'));

export const DrainSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .meta(
        d(
          'Hold terminating nodes with a lifecycle hook and feed aws-node-termination-handler (queue mode) so that their pods are drained first. @default true',
        ),
      ),
    heartbeatTimeoutSeconds: intIn(30, 7200, 'heartbeat timeout in seconds')
      .default(300)
      .meta(
        d(
          'How long a terminating node waits for the handler to finish draining before it is terminated anyway. @default 300',
        ),
      ),
  })
  .meta(d('Drain before terminate.'));

export const DRAIN_DEFAULT = { enabled: true, heartbeatTimeoutSeconds: 300 } as const;

/** arn:aws:cloudwatch:<region>:<account>:alarm:<name> (metric and composite alarms alike). */
// eslint-disable-next-line no-control-regex -- the class names the control characters an alarm name may not hold
export const ALARM_ARN = /^arn:aws[a-z-]*:cloudwatch:([a-z0-9-]+):(\d{12}):alarm:[^\0-\x1f]{1,255}$/;

export const RolloutSchema = z
  .strictObject({
    rollbackAlarms: z
      .array(
        noTokens(pattern(ALARM_ARN, 'a CloudWatch alarm ARN (arn:aws:cloudwatch:<region>:<account>:alarm:<name>)')),
      )
      .default([])
      .meta(
        d(
          "Alarms CloudFormation watches during every update of the stack and for monitoringTimeMinutes after it; one in ALARM rolls the stack back (the change set's RollbackConfiguration; at most 5, in the cluster's account and region). @default []",
        ),
      ),
    monitoringTimeMinutes: intIn(0, 180, 'monitoring time in minutes')
      .default(0)
      .meta(
        d('Minutes CloudFormation keeps watching the rollback alarms after the last resource is updated. @default 0'),
      ),
  })
  .meta(d('How each update of the stack is watched (reconciler change sets; cdk deploy has no rollback triggers).'));

export const ROLLOUT_DEFAULT = { rollbackAlarms: [], monitoringTimeMinutes: 0 };
