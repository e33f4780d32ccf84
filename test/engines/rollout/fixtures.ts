import { FleetMember } from '../../../lib/engines/rollout/fleet';
import { Fleet } from '../../../lib/engines/rollout/gate';
import { LoadedPolicies } from '../../../lib/engines/rollout/policy-source';
import { RolloutPolicy, RolloutPolicySchema } from '../../../lib/model/cluster/schema/policy-schema';

export const T0 = Date.parse('2030-01-01T12:00:00.000Z');
export const OLD = 'a'.repeat(64);
export const NEW = 'b'.repeat(64);

/** A member settled long ago on OLD with NEW desired (a pending roll), unless told otherwise. */
export function member(name: string, ring: string | undefined, over: Partial<FleetMember> = {}): FleetMember {
  return {
    name,
    labels: ring ? { ring } : {},
    template: 'flatcar',
    desired: NEW,
    live: OLD,
    stack: { status: 'UPDATE_COMPLETE', lastUpdated: new Date(T0 - 86_400_000).toISOString() },
    executing: false,
    readySince: T0 - 86_400_000,
    recordedLive: OLD,
    hold: false,
    paused: false,
    windows: [],
    ...over,
  };
}

/** Settled on NEW since `msAgo`. */
export const settledOnNew = (msAgo: number): Partial<FleetMember> => ({
  live: NEW,
  recordedLive: NEW,
  readySince: T0 - msAgo,
  stack: { status: 'UPDATE_COMPLETE', lastUpdated: new Date(T0 - msAgo - 600_000).toISOString() },
});
export const rollingNow: Partial<FleetMember> = {
  stack: { status: 'UPDATE_IN_PROGRESS', lastUpdated: new Date(T0 - 60_000).toISOString() },
};

export function policy(spec: Record<string, unknown> = {}, name = 'fleet'): RolloutPolicy {
  return RolloutPolicySchema.parse({
    apiVersion: 'worker-stacks.io/v1alpha1',
    kind: 'WorkerRolloutPolicy',
    metadata: { name },
    spec: {
      waves: [
        { name: 'canary', selector: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1, soak: '1h' },
        { name: 'early', selector: { matchLabels: { ring: 'early' } }, maxConcurrent: '10%', soak: '30m' },
      ],
      remainder: { maxConcurrent: '25%' },
      ...spec,
    },
  });
}

export function fleet(members: readonly FleetMember[], policies: LoadedPolicies | RolloutPolicy[] = [policy()]): Fleet {
  const loaded = Array.isArray(policies)
    ? {
        policies: policies.map((p) => ({ policy: p, source: `clusters/rollout-policies/${p.metadata.name}.yaml` })),
        problems: [],
      }
    : policies;
  return { members: new Map(members.map((m) => [m.name, m])), policies: loaded };
}
