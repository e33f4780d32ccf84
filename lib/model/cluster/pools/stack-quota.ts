import { stackUnits } from './pools';
import { WorkerCluster } from '../schema/schema';

/**
 * CloudFormation's stack quota per account and region against the stacks a fleet plans there: every cluster has its
 * shared stack and one stack per pool but default (pools.ts stackUnits), and each account/region has worker-stacks'
 * bootstrap stack. A fleet that grows pools reaches the quota long before it reaches a cluster count anyone would
 * notice; `validate` warns at 80 % so that the quota raise is asked for before a create fails.
 */

/** AWS's default stack quota per account and region (Service Quotas: AWS CloudFormation, "Stack count"). */
export const DEFAULT_STACK_LIMIT = 2000;
/** The share of the quota at which `validate` warns. */
export const STACK_QUOTA_WARNING_SHARE = 0.8;
/** worker-stacks' own stack per account and region (`worker-stacks bootstrap`). */
export const BOOTSTRAP_STACKS_PER_REGION = 1;

/** The stacks a fleet plans in one account and region. */
export interface PlannedStacks {
  readonly account: string;
  readonly region: string;
  /** Cluster objects there. */
  readonly clusters: number;
  /** Their stacks: Σ stackUnits(cluster).length. */
  readonly clusterStacks: number;
  /** clusterStacks + the bootstrap stack. */
  readonly planned: number;
}

/** The planned stacks per account and region, sorted by account then region. */
export function plannedStacks(clusters: readonly WorkerCluster[]): PlannedStacks[] {
  const by = new Map<string, { account: string; region: string; clusters: number; clusterStacks: number }>();
  for (const c of clusters) {
    const key = `${c.spec.account}/${c.spec.region}`;
    const e = by.get(key) ?? { account: c.spec.account, region: c.spec.region, clusters: 0, clusterStacks: 0 };
    e.clusters += 1;
    e.clusterStacks += stackUnits(c).length;
    by.set(key, e);
  }
  return [...by.values()]
    .sort((a, b) => (a.account === b.account ? a.region.localeCompare(b.region) : a.account.localeCompare(b.account)))
    .map((e) => ({ ...e, planned: e.clusterStacks + BOOTSTRAP_STACKS_PER_REGION }));
}

/** One account/region at or above the warning share of its quota. */
export interface StackQuotaWarning extends PlannedStacks {
  readonly limit: number;
  /** Where the limit comes from: `default`, `--stack-limit` or `DescribeAccountLimits`. */
  readonly limitSource: string;
  readonly message: string;
}

/** Whole percent of `planned` in `limit`, rounded down (79.99 % is not yet 80 %). */
export const quotaPercent = (planned: number, limit: number) => Math.floor((planned * 100) / limit);

/**
 * The accounts and regions whose planned stacks reach STACK_QUOTA_WARNING_SHARE of their limit, each with its message.
 * `limitOf` gives the limit of an account/region and where it comes from.
 */
export function stackQuotaWarnings(
  planned: readonly PlannedStacks[],
  limitOf: (account: string, region: string) => { readonly limit: number; readonly source: string },
): StackQuotaWarning[] {
  return planned.flatMap((p) => {
    const { limit, source } = limitOf(p.account, p.region);
    if (p.planned < STACK_QUOTA_WARNING_SHARE * limit) return [];
    const share = quotaPercent(p.planned, limit);
    const over = p.planned > limit;
    const message =
      `account ${p.account} region ${p.region}: ${p.planned} planned stacks (${p.clusterStacks} of ${p.clusters} cluster${p.clusters === 1 ? '' : 's'} and their pools, + ${BOOTSTRAP_STACKS_PER_REGION} bootstrap) ` +
      `are ${share} % of CloudFormation's limit of ${limit} stacks per account and region (${source})${over ? ': the stacks beyond it cannot be created' : ''}; ` +
      `the account's other stacks count too. Ask AWS for a higher "Stack count" quota (Service Quotas, AWS CloudFormation) before more stacks fail to create, or use fewer pools`;
    return [{ ...p, limit, limitSource: source, message }];
  });
}
