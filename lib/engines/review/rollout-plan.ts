import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { formatProblem } from '../../core/errors';
import { FleetMember } from '../rollout/fleet';
import { placeAll } from '../rollout/gate';
import { FilePolicySource, LoadedPolicies } from '../rollout/policy-source';

/** Which clusters whose nodes roll go in which wave of the head's rollout policies. */
export interface RolloutPlan {
  readonly policies: ReadonlyArray<{
    readonly policy: string;
    readonly waves: ReadonlyArray<{ readonly wave: string; readonly clusters: readonly string[] }>;
  }>;
  /** Rolling clusters no policy selects: they roll as --concurrency allows. */
  readonly ungoverned: readonly string[];
  /** Problems of the policy objects: the daemon starts no roll while there is one. */
  readonly problems: readonly string[];
}

/** Places the rolling clusters (name → labels at head) in the waves of `policies`, in wave order. Pure. @internal exported for its tests */
export function planRollout(
  rolling: ReadonlyMap<string, Readonly<Record<string, string>>>,
  policies: LoadedPolicies,
): RolloutPlan {
  const members = new Map<string, FleetMember>(
    [...rolling].map(([name, labels]) => [
      name,
      { name, labels, executing: false, hold: false, paused: false, windows: [] },
    ]),
  );
  const { placements, conflicts } = placeAll({ members, policies });
  return {
    policies: policies.policies
      .map((p) => ({
        policy: p.policy.metadata.name,
        waves: [...p.policy.spec.waves, p.policy.spec.remainder]
          .map((w, index) => ({
            wave: w.name,
            clusters: [...placements]
              .filter(([, at]) => at.policy === p && at.index === index)
              .map(([n]) => n)
              .sort(),
          }))
          .filter((w) => w.clusters.length > 0),
      }))
      .filter((p) => p.waves.length > 0),
    ungoverned: [...rolling.keys()].filter((n) => !placements.has(n) && !conflicts.has(n)).sort(),
    problems: [
      ...policies.problems.map(formatProblem),
      ...[...conflicts].map(
        ([n, ps]) =>
          `${n}: selected by rollout policies ${ps.join(' and ')}; the daemon holds it until their clusterSelectors are disjoint`,
      ),
    ],
  };
}

/** The head's policies and the labels of the rolling clusters, read from the working tree. */
export async function rolloutPlanAt(
  projectDir: string,
  clustersDir: string,
  rolling: readonly string[],
): Promise<RolloutPlan | null> {
  const dir = path.resolve(projectDir, clustersDir);
  const policies = await new FilePolicySource({ clustersDir: dir, relativeTo: projectDir }).load();
  if (policies.policies.length === 0 && policies.problems.length === 0) return null;
  const labels = new Map<string, Record<string, string>>();
  for (const name of rolling) {
    const file = ['yaml', 'yml'].map((e) => path.join(dir, `${name}.${e}`)).find((f) => fs.existsSync(f));
    let l: Record<string, string>;
    try {
      const raw = file
        ? (parse(fs.readFileSync(file, 'utf8')) as { metadata?: { labels?: Record<string, string> } })
        : undefined;
      l = raw?.metadata?.labels ?? {};
    } catch {
      l = {}; // an object that does not parse is reported by the review itself
    }
    labels.set(name, l);
  }
  return planRollout(labels, policies);
}

/** `canary: a; early: b, c; remainder: 87 (d, e, f and 84 more)` lines, one per policy. */
export function rolloutLines(plan: RolloutPlan): string[] {
  const names = (cs: readonly string[]) =>
    cs.length <= 5 ? cs.join(', ') : `${cs.length} (${cs.slice(0, 3).join(', ')} and ${cs.length - 3} more)`;
  return [
    ...plan.policies.map(
      (p) =>
        `rollout policy ${p.policy}: ${p.waves.map((w, i) => `wave ${i + 1} ${w.wave}: ${names(w.clusters)}`).join('; ')}`,
    ),
    ...(plan.ungoverned.length ? [`no rollout policy: ${names(plan.ungoverned)} (roll as --concurrency allows)`] : []),
    ...plan.problems.map((p) => `rollout policy problem: ${p}`),
  ];
}
