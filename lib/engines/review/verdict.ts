import { workerStackName } from '../../core/naming';
import { describeRollChange, rollKeyOf } from '../stacks/roll-key';
import { Capacity, ClusterStatus, RollingUpdate } from './model';
import { describeRollout } from './rollout-words';
import { replaces, ResourceChange, TemplateChanges } from './template-diff';
import { asRecord, isRecord, JsonObject } from '../../core/json';

const LAUNCH_TYPES: Record<string, string> = {
  'AWS::EC2::LaunchTemplate': 'launch template',
  'AWS::AutoScaling::LaunchConfiguration': 'launch configuration',
};
const GROUP_TYPE = 'AWS::AutoScaling::AutoScalingGroup';
/** Group properties whose change makes CloudFormation apply the AutoScalingRollingUpdate policy. */
const ROLLING_PROPERTIES = [
  'LaunchTemplate',
  'LaunchConfigurationName',
  'MixedInstancesPolicy',
  'VPCZoneIdentifier',
  'PlacementGroup',
];

const short = (checksum: string | null) => (checksum ? checksum.slice(0, 12) : 'none');

/** What a launch template property means to the reader of a roll reason, where its path alone does not say it. */
const PROPERTY_WORDS: Record<string, string> = {
  'LaunchTemplateData.NetworkInterfaces':
    "LaunchTemplateData.NetworkInterfaces: the nodes' security groups (the first rule narrowed to a pool adds its own group, the last one removed takes it away)",
};
const worded = (property: string) => PROPERTY_WORDS[property] ?? property;

/**
 * Why an update of the stack replaces the nodes: the launch template or
 * launch configuration changes (a new version, so the group's rolling update
 * replaces every instance), a group property that triggers the rolling update
 * changes, or the group itself is replaced. Empty when nothing rolls.
 *
 * Whether it rolls is the roll key's answer (lib/engines/stacks/roll-key.ts, the one every gate of the reconciler
 * reads) when both templates are given and both have a group: equal keys roll nothing, whatever the diff shows (a
 * `DependsOn` of the launch template, its own tags: CloudFormation makes no new version for them). The diff only
 * words the reasons; a key change the diff does not word is said in the roll key's words.
 */
export function rollReasons(
  changes: TemplateChanges,
  checksum: { base: string | null; head: string | null },
  templates?: { readonly base: unknown; readonly head: unknown },
): string[] {
  const reasons = diffReasons(changes, checksum);
  const from = templates && rollKeyOf(templates.base);
  const to = templates && rollKeyOf(templates.head);
  // Without a group on either side the key has no answer (a stack that gains or loses its group): the diff says it.
  if (!from || !to) return reasons;
  if (from.key === to.key) return [];
  return reasons.length ? reasons : [`the roll key changes (${describeRollChange(from, to)})`];
}

/** The roll reasons the template diff words. */
function diffReasons(changes: TemplateChanges, checksum: { base: string | null; head: string | null }): string[] {
  const reasons: string[] = [];
  for (const r of changes.resources) {
    const what = LAUNCH_TYPES[r.type];
    if (what) {
      const userData = r.properties.some((p) => /(^|\.)UserData(\.|$)/.test(p));
      const also = r.properties.length > 1 ? `; also ${others(r, /(^|\.)UserData(\.|$)/)}` : '';
      const detail = !userData
        ? r.properties.map(worded).join(', ')
        : checksum.base !== checksum.head
          ? `user data: node config ${short(checksum.base)} -> ${short(checksum.head)}${also}`
          : `user data: the bootstrap changed, the node config did not${also}`;
      reasons.push(
        `${what} ${r.logicalId} ${r.change === 'modified' ? 'changes' : `is ${r.change}`}${detail ? ` (${detail})` : ''}`,
      );
    } else if (r.type === GROUP_TYPE && r.change === 'modified') {
      if (replaces(r)) reasons.push(`Auto Scaling group ${r.logicalId} is replaced`);
      else {
        const rolling = r.properties.filter((p) => ROLLING_PROPERTIES.includes(p.split('.')[0]));
        if (rolling.length) reasons.push(`Auto Scaling group ${r.logicalId}: ${rolling.join(', ')} change`);
      }
    }
  }
  return reasons;
}

function others(r: ResourceChange, not: RegExp): string {
  return r.properties.filter((p) => !not.test(p)).join(', ');
}

/** How the (first) worker group of a template rolls, and its sizes. */
export function groupSettings(template: JsonObject | undefined): {
  rollingUpdate: RollingUpdate | null;
  capacity: Capacity | null;
} {
  const resources = Object.entries(asRecord(template?.Resources)).map(([id, r]) => [id, asRecord(r)] as const);
  const found = resources.find(([, r]) => r.Type === GROUP_TYPE);
  if (!found) return { rollingUpdate: null, capacity: null };
  const [groupId, group] = found;
  const num = (v: unknown) => (v === undefined || v === null || Number.isNaN(Number(v)) ? null : Number(v));
  const policy = asRecord(group.UpdatePolicy);
  const ru = isRecord(policy.AutoScalingRollingUpdate) ? policy.AutoScalingRollingUpdate : undefined;
  const ir = isRecord(policy.AutoScalingInstanceRefresh) ? policy.AutoScalingInstanceRefresh : undefined;
  const creation = asRecord(group.CreationPolicy);
  const p = asRecord(group.Properties);
  // Drained: a termination lifecycle hook on this group holds each terminating node for the handler: inline in the
  // group (this release: node-drain.ts), or a resource of its own referencing it (earlier releases).
  const terminating = (h: unknown) => asRecord(h).LifecycleTransition === 'autoscaling:EC2_INSTANCE_TERMINATING';
  const inline = Array.isArray(p.LifecycleHookSpecificationList) && p.LifecycleHookSpecificationList.some(terminating);
  const drained =
    inline ||
    resources.some(([, r]) => {
      const hook = asRecord(r.Properties);
      return (
        r.Type === 'AWS::AutoScaling::LifecycleHook' &&
        hook.LifecycleTransition === 'autoscaling:EC2_INSTANCE_TERMINATING' &&
        asRecord(hook.AutoScalingGroupName).Ref === groupId
      );
    });
  const pref = asRecord(ir?.Preferences);
  const signalTimeout = asRecord(creation.ResourceSignal).Timeout;
  const checkpoints = pref.CheckpointPercentages;
  const alarms = asRecord(pref.AlarmSpecification).Alarms;
  const rollingUpdate: RollingUpdate | null =
    ru || ir
      ? {
          strategy: ir ? 'instanceRefresh' : 'rolling',
          nodes: num(p.DesiredCapacity),
          maxBatchSize: ru ? num(ru.MaxBatchSize) : null,
          minInstancesInService: ru ? num(ru.MinInstancesInService) : null,
          pauseTime:
            typeof ru?.PauseTime === 'string' ? ru.PauseTime : typeof signalTimeout === 'string' ? signalTimeout : null,
          waitOnResourceSignals: ru?.WaitOnResourceSignals === true || ru?.WaitOnResourceSignals === 'true',
          minSuccessfulInstancesPercent: num(
            ru?.MinSuccessfulInstancesPercent ??
              asRecord(creation.AutoScalingCreationPolicy).MinSuccessfulInstancesPercent,
          ),
          instanceRefresh: ir
            ? {
                minHealthyPercentage: num(pref.MinHealthyPercentage),
                maxHealthyPercentage: num(pref.MaxHealthyPercentage),
                checkpoints: Array.isArray(checkpoints) ? checkpoints.map(Number) : [],
                bakeTimeSeconds: num(pref.BakeTime),
                alarms: Array.isArray(alarms) ? alarms.map(String) : [],
              }
            : null,
          drained,
        }
      : null;
  return { rollingUpdate, capacity: { min: num(p.MinSize), max: num(p.MaxSize), desired: num(p.DesiredCapacity) } };
}

/** `2 nodes in batches of 1, at least 1 in service, gated by node signals (100% within PT10M), drained`. */
export function describeRollingUpdate(ru: RollingUpdate | null): string {
  if (!ru) return 'no rolling-update policy: CloudFormation replaces instances as it sees fit';
  return describeRollout(ru);
}

/**
 * `desired capacity 2`, or without one: an existing group keeps its current
 * size (`... the group keeps its current size`), while a new group has none
 * yet and starts at its minimum (`... starts with min 3 nodes`).
 */
export function describeCapacity(c: Capacity | null, isNew = false): string {
  if (!c) return 'no Auto Scaling group';
  if (c.desired !== null) return `desired capacity ${c.desired} (min ${c.min ?? '?'}, max ${c.max ?? '?'})`;
  return isNew
    ? `desired capacity not set (starts with min ${c.min ?? '?'} node${c.min === 1 ? '' : 's'}, max ${c.max ?? '?'})`
    : `desired capacity not set (min ${c.min ?? '?'}, max ${c.max ?? '?'}; the group keeps its current size)`;
}

/** Headline words of each status. */
export const STATUS_WORDS: Record<ClusterStatus, string> = {
  unchanged: 'no change',
  changes: 'changes without replacing nodes',
  rolls: 'rolls nodes',
  added: 'new cluster',
  removed: 'removed',
  renamed: 'renamed',
  invalid: 'invalid',
  fixed: 'fixed',
};

export interface VerdictInput {
  readonly status: ClusterStatus;
  readonly stackName: string;
  readonly resources: readonly ResourceChange[];
  readonly rollingUpdate: RollingUpdate | null;
  readonly capacity: Capacity | null;
  readonly renamedFrom?: string | null;
  /** For `invalid`: what each side's app refused. */
  readonly problems?: { readonly base: readonly string[]; readonly head: readonly string[] };
}

/** The one-line verdict of a cluster. */
export function verdictLine(v: VerdictInput): string {
  const head = STATUS_WORDS[v.status];
  switch (v.status) {
    case 'unchanged':
      return head;
    case 'changes': {
      const counts = (['modified', 'added', 'removed'] as const)
        .map((c) => [c, v.resources.filter((r) => r.change === c).length] as const)
        .filter(([, n]) => n > 0)
        .map(([c, n]) => `${n} resource${n === 1 ? '' : 's'} ${c}`);
      const replaced = v.resources.filter(replaces).map((r) => r.logicalId);
      return `${head}: ${counts.join(', ') || 'outputs or template sections only'}${replaced.length ? `; replaces ${replaced.join(', ')}` : ''}`;
    }
    case 'rolls':
      return `${head}: ${describeRollingUpdate(v.rollingUpdate)}; ${describeCapacity(v.capacity)}`;
    case 'added':
      return `${head}: creates ${v.stackName} with its nodes, ${describeCapacity(v.capacity, true)}`;
    case 'fixed':
      return `${head}: invalid at base, valid at head; deploys ${v.stackName} whole, ${describeCapacity(v.capacity, true)} if it is new`;
    case 'invalid': {
      const n = v.problems?.head.length ?? 0;
      const where = v.problems?.base.length ? 'at base and at head' : 'at head';
      return `${head} ${where}: ${n} problem${n === 1 ? '' : 's'}; nothing of ${v.stackName} can deploy until fixed`;
    }
    case 'removed':
      return `${head}: ${v.stackName} is NOT deleted by the reconciler; deleting it is an explicit command`;
    case 'renamed':
      return `${head} from ${v.renamedFrom} (same spec): creates ${v.stackName} with new nodes; ${workerStackName(v.renamedFrom ?? '?')} is NOT deleted by the reconciler`;
  }
}
