import { Problem } from '../../core/errors';
import { describeSelector, Labels, matches } from '../../model/cluster/schema/selector';
import { LoadedPolicy } from './policy-source';
import { sameNamespace } from './gate';

/**
 * Two rollout policies that select one cluster. The daemon holds such a cluster (gate.ts placeAll: Held, naming the
 * policies), so a change to it never rolls, and nothing said so before the change was merged. `validate` sees the
 * policies and the objects together, so it refuses the overlap there: each policy that selects a cluster an earlier
 * policy (by file name) also selects, at its clusterSelector, naming the cluster and the other policy.
 */
export function policyOverlapProblems(
  policies: readonly LoadedPolicy[],
  clusters: readonly { readonly name: string; readonly namespace?: string; readonly labels: Labels }[],
): Problem[] {
  const out: Problem[] = [];
  const sorted = [...policies].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
  for (const [i, p] of sorted.entries()) {
    const shared = new Map<string, string[]>(); // earlier policy → the clusters both select
    for (const c of clusters) {
      if (!sameNamespace(p, c) || !matches(p.policy.spec.clusterSelector, c.labels)) continue;
      const earlier = sorted
        .slice(0, i)
        .find((q) => sameNamespace(q, c) && matches(q.policy.spec.clusterSelector, c.labels));
      if (earlier) shared.set(earlier.source, [...(shared.get(earlier.source) ?? []), c.name]);
    }
    for (const [other, names] of shared)
      out.push({
        file: p.source,
        path: 'spec.clusterSelector',
        message: `${describeSelector(p.policy.spec.clusterSelector) || '(every cluster)'} selects ${names.join(', ')}, which ${other} also selects: a cluster is governed by one rollout policy, and the daemon holds one that two select (narrow one selector, or label the clusters apart)`,
      });
  }
  return out;
}
