import { ClusterReview, ClusterStatus, ReviewResult } from './model';
import { STATUS_WORDS } from './verdict';

/** Statuses in the order a summary lists them. */
export const STATUS_ORDER: readonly ClusterStatus[] = [
  'invalid',
  'rolls',
  'fixed',
  'changes',
  'added',
  'renamed',
  'removed',
  'unchanged',
];

/** `base origin/main (1a2b3c4d) -> working tree` */
export function sidesLine(r: ReviewResult): string {
  return `base ${r.base.ref} (${r.base.commit.slice(0, 8)}) -> working tree${r.head.commit ? ` (on ${r.head.commit.slice(0, 8)})` : ''}`;
}

/** `3 clusters: 1 rolls nodes, 1 changes without replacing nodes, 1 no change` */
export function summaryLine(r: ReviewResult): string {
  const parts = STATUS_ORDER.filter((s) => r.summary[s] > 0).map((s) => `${r.summary[s]} ${STATUS_WORDS[s]}`);
  return `${r.summary.clusters} cluster${r.summary.clusters === 1 ? '' : 's'}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

/** `db672ad36260 -> 1c0b4f2e9a11` */
export function checksumLine(c: Pick<ClusterReview, 'checksum'>): string {
  const s = (x: string | null) => (x ? x.slice(0, 12) : 'none');
  return `${s(c.checksum.base)} -> ${s(c.checksum.head)}`;
}

/** The heading of one config entry: `file /var/lib/kubelet/config.yaml: modified (mode 0644 -> 0755)` */
export function entryHeading(e: { kind: string; name: string; change: string; notes: readonly string[] }): string {
  return `${e.kind} ${e.name}: ${e.change}${e.notes.length ? ` (${e.notes.join('; ')})` : ''}`;
}

/** `... 12 more diff lines not shown` */
export function omittedLine(n: number): string {
  return `... ${n} more diff line${n === 1 ? '' : 's'} not shown`;
}

/** Clusters with something to say, in name order. */
export function changedClusters(r: ReviewResult): ClusterReview[] {
  return r.clusters.filter((c) => c.status !== 'unchanged');
}

/** Whether the cluster's stack is diffed whole (added, renamed: a new stack name, fixed: nothing valid at base), so its template diff is every resource. */
export function createsStack(c: ClusterReview): boolean {
  return c.status === 'added' || c.status === 'renamed' || c.status === 'fixed';
}
