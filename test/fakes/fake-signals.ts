import { isoSeconds } from '../../lib/model/cluster/rules/rollout-rules';
import { FailingResource } from './fake-cloudformation';
import { Json } from '../helpers/json';

/**
 * How the fake CloudFormation's operations wait on the nodes' health signals, the way CloudFormation does: a create
 * whose group has a CreationPolicy, and an update that replaces the group's instances while its rolling update waits
 * on signals, end only when the nodes signal or the timeout (PauseTime) passes. The nodes of a stack are healthy
 * (they signal SUCCESS at once), silent (they never signal: the timeout passes) or failing (they signal FAILURE).
 */
export type NodeHealth = 'healthy' | 'silent' | 'failing';

export interface SignalFailure {
  /** Clock time from the start of the operation to the failure. */
  readonly afterMs: number;
  readonly resource: FailingResource;
}

const GROUP = 'AWS::AutoScaling::AutoScalingGroup';
const LAUNCH = new Set(['AWS::EC2::LaunchTemplate', 'AWS::AutoScaling::LaunchConfiguration']);
/** Group properties whose change makes the rolling update replace instances (as lib/engines/review/verdict.ts). */
const ROLLING = ['LaunchTemplate', 'LaunchConfigurationName', 'MixedInstancesPolicy', 'VPCZoneIdentifier'];

type Resources = Record<
  string,
  { Type: string; Properties?: Record<string, unknown>; UpdatePolicy?: Json; CreationPolicy?: Json }
>;
const resources = (template: string | undefined): Resources => (template ? (JSON.parse(template).Resources ?? {}) : {});
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The failure an operation ends in when its nodes do not come up; undefined when nothing waits on them (or they are healthy). */
export function signalFailure(
  kind: 'create' | 'update',
  before: string | undefined,
  after: string | undefined,
  health: NodeHealth,
): SignalFailure | undefined {
  if (health === 'healthy' || !after) return undefined;
  const now = resources(after);
  const old = resources(before);
  for (const [id, group] of Object.entries(now).filter(([, r]) => r.Type === GROUP)) {
    const p = group.Properties ?? {};
    const initial = Number(p.DesiredCapacity ?? p.MinSize ?? 0);
    if (kind === 'create') {
      const signal = group.CreationPolicy?.ResourceSignal;
      if (!signal || !Number(signal.Count)) continue;
      const pct = group.CreationPolicy?.AutoScalingCreationPolicy?.MinSuccessfulInstancesPercent ?? 100;
      const count = Number(signal.Count);
      return failure(kind, id, isoSeconds(signal.Timeout ?? 'PT5M')!, health, count, pct);
    }
    const ru = group.UpdatePolicy?.AutoScalingRollingUpdate;
    if (!ru || String(ru.WaitOnResourceSignals) !== 'true' || !Object.hasOwn(old, id)) continue;
    const launchChanged = Object.entries(now).some(([lid, r]) => LAUNCH.has(r.Type) && !same(r, old[lid]));
    const groupRolls = ROLLING.some((k) => !same(p[k], old[id].Properties?.[k]));
    if (!launchChanged && !groupRolls) continue;
    const batch = Math.min(Number(ru.MaxBatchSize ?? 1), initial);
    if (batch <= 0) continue;
    return failure(
      kind,
      id,
      isoSeconds(ru.PauseTime ?? 'PT5M')!,
      health,
      batch,
      ru.MinSuccessfulInstancesPercent ?? 100,
    );
  }
  return undefined;
}

function failure(
  kind: 'create' | 'update',
  logicalId: string,
  pauseSeconds: number,
  health: NodeHealth,
  of: number,
  pct: number,
): SignalFailure {
  const requirement = `Unable to satisfy ${pct}% MinSuccessfulInstancesPercent requirement`;
  // Silent nodes: CloudFormation waits the whole pause time, then counts each missing signal as a failure.
  // Failing nodes report FAILURE when their own timeout passes, earlier than the pause time.
  const silent =
    kind === 'create'
      ? `Failed to receive ${of} resource signal(s) within the specified duration`
      : `Received 0 SUCCESS signal(s) out of ${of}. ${requirement}`;
  const reason = health === 'silent' ? silent : `Received ${of} FAILURE signal(s) out of ${of}. ${requirement}`;
  const afterMs = (health === 'silent' ? pauseSeconds : Math.max(1, pauseSeconds - 60)) * 1000;
  return { afterMs, resource: { logicalId, resourceType: GROUP, reason } };
}
