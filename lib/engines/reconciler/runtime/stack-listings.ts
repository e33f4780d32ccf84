import { StackSummary } from '../../../model/ports/cloudformation-port';
import { ClusterRecord } from '../../../model/ports/cluster-store';
import { workerStackName } from '../../../core/naming';
import { ReconcilerDeps, RegionClients } from '../workflow/context';
import { accountOf } from '../compose/workflow';

/**
 * Stack listings per account and region, shared by every reconcile for `maxAgeMs` (the poll interval):
 * - a full listing (DescribeStacks pages: status and outputs of every stack) for each pass over the fleet;
 * - between passes, a cluster whose stack was last seen in progress is looked at through a listing of the stacks in
 *   progress only (ListStacks with a status filter, 100 per page), and a stack that has left it is described alone.
 * So watching a hundred stacks roll costs ceil(in progress / 100) pages per region per poll, plus one describe per
 * stack whose operation ended: never a waiter per stack, never the whole region's stacks every poll.
 */
export class StackListings {
  private readonly cache = new Map<string, Listing>();
  private readonly inProgressCache = new Map<string, Listing>();
  /** Counts listings and writes in the order they began: a listing is newer than a write when its epoch is greater. */
  private epoch = 0;
  /** Per cluster, the epoch of this process's last reconcile that may have written (status or AWS). */
  private readonly written = new Map<string, number>();
  constructor(
    private readonly deps: ReconcilerDeps,
    private readonly maxAgeMs: number,
    private readonly clock: () => number = () => deps.now().getTime(),
  ) {}

  /** The stacks of an account's region, no older than maxAgeMs; undefined when the listing failed (each cluster then describes its own). */
  public get(region: string, fresh = false, account?: string): Promise<Map<string, StackSummary> | undefined> {
    return this.cached(this.cache, region, fresh, account, (cfn) => cfn.listStacks());
  }

  /** The stacks in progress of an account's region, no older than maxAgeMs (and begun after the write `since`, an epoch); undefined when the listing failed. */
  public inProgress(region: string, account?: string, since = -1): Promise<Map<string, StackSummary> | undefined> {
    return this.cached(
      this.inProgressCache,
      region,
      !this.usable(this.inProgressCache, region, account, since) && since >= 0,
      account,
      (cfn) => cfn.listStacksInProgress(),
    );
  }

  /**
   * A reconcile of `cluster` may have written (its status, or to AWS: an execute, a delete): from now on no listing
   * begun before this moment is used for it. Our own write is what brings the cluster back at once (the store's
   * watch), so a listing from before it would show the stack as it was before our own operation.
   */
  public wrote(cluster: string): void {
    this.written.set(cluster, this.epoch);
  }

  /** The cluster is gone (deleted, or left this daemon): nothing is kept for it. */
  public forget(cluster: string): void {
    this.written.delete(cluster);
  }

  /**
   * The listed stack of a cluster: null when listed and absent, undefined when not listed. Never from a listing
   * begun before this process's last write for the cluster (see `wrote`): then the stack is described alone.
   */
  public async stackOf(record: ClusterRecord, fresh = false): Promise<StackSummary | null | undefined> {
    return (await this.lookup(record, fresh)).stack;
  }

  /** As stackOf, and whether the stack was described alone now (a strongly consistent read after our last write). */
  public async lookup(
    record: ClusterRecord,
    fresh = false,
    /** One of the cluster's stacks. @default the shared stack WorkerStack-<cluster> */
    name = workerStackName(record.name),
  ): Promise<{ readonly stack: StackSummary | null | undefined; readonly described: boolean }> {
    const listed = (stack: StackSummary | null | undefined) => ({ stack, described: false });
    const region = regionOf(record);
    if (!region) return listed(undefined);
    const account = accountOf(record.raw);
    const since = this.written.get(record.name) ?? -1;
    const describe = () =>
      this.deps
        .aws(region, account)
        .cfn.describeStack(name)
        .then(
          (s) => ({ stack: s ?? null, described: true }),
          () => listed(undefined),
        );
    if (!fresh && wasInProgress(record, name) && !this.usable(this.cache, region, account, since)) {
      const inProgress = await this.inProgress(region, account, since);
      const hit = inProgress?.get(name);
      if (hit) return listed(hit);
      // It left the in-progress state since it was last seen: this one stack, described (outputs and all).
      if (inProgress) return describe();
    }
    // A listing of the whole region from before our own write is not listed anew for one cluster: it is described.
    if (!fresh && this.isFresh(this.cache, region, account) && !this.usable(this.cache, region, account, since))
      return describe();
    const listing = await this.get(region, fresh, account);
    return listed(listing ? (listing.get(name) ?? null) : undefined);
  }

  private isFresh(cache: Map<string, Listing>, region: string, account?: string): boolean {
    const hit = cache.get(account ? `${account}/${region}` : region);
    return hit !== undefined && this.clock() - hit.at < this.maxAgeMs;
  }

  /** Fresh, and begun after the write `since` (an epoch). */
  private usable(cache: Map<string, Listing>, region: string, account: string | undefined, since: number): boolean {
    const hit = cache.get(account ? `${account}/${region}` : region);
    return hit !== undefined && this.isFresh(cache, region, account) && hit.epoch > since;
  }

  private cached(
    cache: Map<string, Listing>,
    region: string,
    fresh: boolean,
    account: string | undefined,
    list: (cfn: RegionClients['cfn']) => Promise<Map<string, StackSummary>>,
  ): Promise<Map<string, StackSummary> | undefined> {
    const key = account ? `${account}/${region}` : region;
    const hit = cache.get(key);
    const now = this.clock();
    if (hit && !fresh && now - hit.at < this.maxAgeMs) return hit.value;
    const value = list(this.deps.aws(region, account).cfn).catch((e: unknown) => {
      this.deps.log.warn(
        { region, account, err: String(e) },
        'could not list stacks; falling back to one describe per cluster',
      );
      return undefined;
    });
    cache.set(key, { at: now, epoch: ++this.epoch, value });
    return value;
  }
}

interface Listing {
  /** Clock time it was taken. */
  readonly at: number;
  /** When it began, among listings and writes (StackListings.wrote). */
  readonly epoch: number;
  readonly value: Promise<Map<string, StackSummary> | undefined>;
}

/** The cluster's stack (or one of its pools' stacks, by name) was in progress when last seen (or our change set is executing). */
export function wasInProgress(record: ClusterRecord, stackName?: string): boolean {
  const pool = stackName === undefined ? undefined : record.status?.pools?.find((p) => p.stackName === stackName);
  const s = pool ?? (stackName === undefined || stackName === workerStackName(record.name) ? record.status : undefined);
  return Boolean(s?.controller?.executing) || /_IN_PROGRESS$/.test(s?.stackStatus ?? '');
}

/** The object's region as written (before validation: the listings are keyed by it), when it is a string. */
export function regionOf(r: ClusterRecord): string | undefined {
  const region = (r.raw as { spec?: { region?: unknown } } | undefined)?.spec?.region;
  return typeof region === 'string' ? region : undefined;
}
