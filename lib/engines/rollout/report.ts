import { StackSummary } from '../../model/ports/cloudformation-port';
import { formatProblem } from '../../core/errors';
import { parseDuration } from '../../model/cluster/schema/duration';
import { ClusterRecord } from '../../model/ports/cluster-store';
import { FleetMember, onDesired, pendingRoll, rolling, settledSince } from './fleet';
import { decide, Fleet, placeAll, some } from './gate';
import { policyRef } from './policy-events';
import { waveConcurrency } from '../../model/cluster/schema/policy-schema';
import { describeSelector } from '../../model/cluster/schema/selector';

/** Where one cluster is in the rollout. */
export type ClusterPhase = 'settled' | 'soaking' | 'rolling' | 'next' | 'waiting' | 'halted' | 'failed';
export type WavePhase = 'settled' | 'rolling' | 'waiting' | 'halted';

export interface ClusterLine {
  readonly cluster: string;
  readonly phase: ClusterPhase;
  /** Why it waits, or what failed. */
  readonly why?: string;
}

export interface WaveReport {
  readonly name: string;
  readonly selector: string;
  readonly size: number;
  readonly maxConcurrent: string;
  readonly soak: string;
  readonly phase: WavePhase;
  readonly counts: Readonly<Record<ClusterPhase, number>>;
  /** Every cluster that is not settled, with why. */
  readonly clusters: readonly ClusterLine[];
}

export interface PolicyReport {
  readonly policy: string;
  /** Its namespace (the Kubernetes store). @default none */
  readonly namespace?: string;
  readonly source: string;
  readonly paused: boolean;
  readonly waves: readonly WaveReport[];
}

export interface RolloutReport {
  readonly policies: readonly PolicyReport[];
  /** Problems of the policy objects: no roll starts while there is one. */
  readonly problems: readonly string[];
  /** Clusters no policy selects (their rolls are bounded by --concurrency only). */
  readonly ungoverned: readonly string[];
}

/** A stack as the reconciler last recorded it (for offline commands: no AWS call). */
export function recordedStack(record: ClusterRecord): StackSummary | undefined {
  const s = record.status;
  if (!s?.stackStatus || s.stackStatus === 'DELETE_COMPLETE') return undefined;
  return {
    name: s.stackName ?? record.name,
    id: s.stackId ?? '',
    status: s.stackStatus,
    outputs: s.cloudConfigChecksum ? { ConfigChecksum: s.cloudConfigChecksum } : {},
    lastUpdated: s.stackLastUpdated,
  };
}

/** Per policy and wave: settled / rolling / waiting / halted, with the clusters and why. Pure. */
export function rolloutReport(fleet: Fleet, now: Date): RolloutReport {
  const placed = placeAll(fleet);
  const policies = fleet.policies.policies.map((p): PolicyReport => {
    const spec = p.policy.spec;
    const waves = [...spec.waves, spec.remainder].map((w, index): WaveReport => {
      const members = [...fleet.members.values()]
        .filter((m) => {
          const at = placed.placements.get(m.name);
          return at?.policy === p && at.index === index;
        })
        .sort((a, b) => (a.name < b.name ? -1 : 1));
      const lines = members.map((m) => line(m, fleet, now, placed));
      const counts = { settled: 0, soaking: 0, rolling: 0, next: 0, waiting: 0, halted: 0, failed: 0 };
      for (const l of lines) counts[l.phase]++;
      const phase: WavePhase =
        counts.failed || counts.halted
          ? 'halted'
          : counts.rolling || counts.next || counts.soaking
            ? 'rolling'
            : counts.waiting
              ? 'waiting'
              : 'settled';
      return {
        name: w.name,
        selector:
          index < spec.waves.length ? describeSelector(spec.waves[index].selector) : 'every cluster no wave selects',
        size: members.length,
        maxConcurrent: `${w.maxConcurrent}${typeof w.maxConcurrent === 'string' ? ` = ${waveConcurrency(w.maxConcurrent, members.length)}` : ''}`,
        soak: w.soak,
        phase,
        counts,
        clusters: lines.filter((l) => l.phase !== 'settled'),
      };
    });
    return {
      policy: p.policy.metadata.name,
      ...(p.namespace ? { namespace: p.namespace } : {}),
      source: p.source,
      paused: spec.paused,
      waves,
    };
  });
  return {
    policies,
    problems: fleet.policies.problems.map(formatProblem),
    ungoverned: [...fleet.members.keys()].filter((n) => !placed.placements.has(n)).sort(),
  };
}

function line(m: FleetMember, fleet: Fleet, now: Date, placed: ReturnType<typeof placeAll>): ClusterLine {
  if (m.failedRoll) return { cluster: m.name, phase: 'failed', why: m.failedRoll };
  if (rolling(m)) return { cluster: m.name, phase: 'rolling', why: `stack ${m.stack?.status ?? 'executing'}` };
  if (pendingRoll(m)) {
    const d = decide(m.name, fleet, now, new Set(), placed);
    if (d.go) return { cluster: m.name, phase: 'next', why: 'may start now' };
    return {
      cluster: m.name,
      phase: d.reason === 'RolloutHalted' ? 'halted' : 'waiting',
      why: `${d.reason}: ${d.message}`,
    };
  }
  const since = settledSince(m);
  if (onDesired(m) && since === undefined)
    return { cluster: m.name, phase: 'rolling', why: 'rolled; not yet recorded Ready' };
  const at = placed.placements.get(m.name);
  const soakMs = at ? (parseDuration(at.wave.soak) ?? 0) : 0;
  if (since !== undefined && since + soakMs > now.getTime())
    return {
      cluster: m.name,
      phase: 'soaking',
      why: `settled at ${new Date(since).toISOString()}, soaks until ${new Date(since + soakMs).toISOString()}`,
    };
  return { cluster: m.name, phase: 'settled' };
}

/** The report as text, one block per wave; non-settled clusters listed with why. */
export function formatRolloutReport(r: RolloutReport): string {
  const out: string[] = [];
  for (const p of r.problems) out.push(`problem: ${p}`);
  if (r.problems.length) out.push('no roll starts while a rollout policy is invalid', '');
  if (r.policies.length === 0 && r.problems.length === 0)
    out.push(
      'no rollout policy: every roll starts as soon as --concurrency allows (add one: <clusters>/rollout-policies/<name>.yaml, or a WorkerRolloutPolicy object with --store kubernetes)',
    );
  for (const p of r.policies) {
    out.push(
      `policy ${p.policy} (${p.source})${p.paused ? `: PAUSED (worker-stacks rollout resume ${policyRef({ name: p.policy, namespace: p.namespace })})` : ''}`,
    );
    p.waves.forEach((w, i) => {
      const counts =
        Object.entries(w.counts)
          .filter(([, n]) => n > 0)
          .map(([k, n]) => `${n} ${k}`)
          .join(', ') || 'no clusters';
      out.push(
        `  wave ${i + 1} ${w.name} [${w.phase}] ${w.selector}: ${w.size} clusters, maxConcurrent ${w.maxConcurrent}, soak ${w.soak}: ${counts}`,
      );
      for (const c of w.clusters) out.push(`    ${c.cluster}\t${c.phase}\t${c.why ?? ''}`);
    });
  }
  if (r.ungoverned.length && r.problems.length === 0) out.push(`no policy selects: ${some(r.ungoverned, 10)}`);
  return `${out.join('\n')}\n`;
}
