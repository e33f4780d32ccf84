import { imageResolver } from '../../model/channel/image-pins';
import { derive } from '../../model/cluster/derive';
import { ClusterStatus, getCondition } from '../../model/cluster/schema/status';
import { listTemplates } from '../../model/cloudconfig/templates';
import { ClusterRecord } from '../../model/ports/cluster-store';
import { createChannelStore, createStore, fileStore, StoreOptions } from './registry';
import { poolStackName, workerStackName } from '../../core/naming';
import { stackUnits } from '../../model/cluster/pools/pools';
import { WorkerCluster } from '../../model/cluster/schema/schema';
import { RenderedConfig } from '../../model/cloudconfig/render';
import { describeRollout, specRollout } from '../../engines/review';
import { templateDirectory } from '../../platform/files/template-directory';

// The rows of `worker-stacks status`, read from the store alone. Here, not in lib/adapters/cli, because the playground (an
// adapter below the CLI) polls them too (issue 22: playground->cli was an upward import).

export interface StatusRow {
  readonly cluster: string;
  /** The cluster's account and region (from the object, else from the recorded stack's ARN): the table groups by them. */
  readonly account?: string;
  readonly region?: string;
  readonly generation: number;
  readonly observedGeneration?: number;
  readonly desiredChecksum?: string;
  readonly liveChecksum?: string;
  readonly inSync: boolean;
  /** A replacement of the nodes the object asks for and the stack does not run yet, and why (status.pendingRoll): `image`. */
  readonly pending?: string;
  readonly stack: string;
  readonly stackStatus?: string;
  readonly ready: string;
  readonly reason?: string;
  readonly message?: string;
  /** When the shown condition last changed (ISO 8601). */
  readonly since?: string;
  readonly failures?: number;
  readonly retryAfter?: string;
  readonly lastConfigChange?: string;
  readonly lastConfigChangeTime?: string;
  readonly paused: boolean;
  /** How the object's nodes roll: strategy, batches, the gate, drain (`in batches of 2, ..., gated by node signals (100% within PT10M), drained`). */
  readonly rolls?: string;
  /** The status could not be read: what is wrong and how to fix it. */
  readonly unreadable?: string;
  /** The whole status, for -o json. */
  readonly status?: ClusterStatus;
  /** Each pool in a stack of its own (status.pools[], and the object's spec.pools), the shared stack being the row above. */
  readonly pools?: readonly PoolRow[];
}

/** One pool's own stack, as the row of its cluster says the shared stack's. */
export interface PoolRow {
  readonly pool: string;
  readonly stack: string;
  readonly observedGeneration?: number;
  readonly desiredChecksum?: string;
  readonly liveChecksum?: string;
  readonly inSync: boolean;
  /** As StatusRow.pending, for this pool's stack. */
  readonly pending?: string;
  /** How this pool's nodes roll, with its own settings (StatusRow.rolls). */
  readonly rolls?: string;
  readonly stackStatus?: string;
  readonly ready: string;
  readonly reason?: string;
  readonly message?: string;
  readonly since?: string;
  readonly failures?: number;
  readonly retryAfter?: string;
}

/** The condition a row shows: what is wrong (Stalled, Degraded), else what is going on, else Ready. */
function shownCondition(status: { readonly conditions: ClusterStatus['conditions'] } | undefined) {
  const s = status ? { conditions: status.conditions } : undefined;
  const is = (t: 'Stalled' | 'Degraded' | 'Progressing') =>
    getCondition(s, t)?.status === 'True' ? getCondition(s, t) : undefined;
  return (
    is('Stalled') ?? is('Degraded') ?? is('Progressing') ?? getCondition(s, 'Progressing') ?? getCondition(s, 'Ready')
  );
}

/** The rows of a cluster's pools with stacks of their own: those the object names, and those its status still records. */
function poolRows(
  r: ClusterRecord,
  cluster: WorkerCluster | undefined,
  configs: ReadonlyMap<string, RenderedConfig> | undefined,
): PoolRow[] | undefined {
  const named = cluster ? stackUnits(cluster).flatMap((u) => (u.shared || !u.pool ? [] : [u.pool])) : [];
  const recorded = (r.status?.pools ?? []).map((p) => p.name);
  const names = [...new Set([...named, ...recorded])];
  if (!names.length) return undefined;
  return names.map((pool) => {
    const p = r.status?.pools?.find((x) => x.name === pool);
    const ready = getCondition(p ? { conditions: p.conditions } : undefined, 'Ready');
    const shown = shownCondition(p);
    const desired = configs?.get(pool)?.checksum;
    return {
      pool,
      stack: p?.stackName ?? poolStackName(r.name, pool),
      observedGeneration: p?.observedGeneration,
      desiredChecksum: desired,
      liveChecksum: p?.cloudConfigChecksum,
      inSync: Boolean(
        desired &&
        desired === p?.cloudConfigChecksum &&
        ready?.status === 'True' &&
        ready.observedGeneration === r.generation,
      ),
      pending: pendingOf(p, desired),
      rolls: cluster && named.includes(pool) ? describeRollout(specRollout(cluster.spec, pool)) : undefined,
      stackStatus: p?.stackStatus,
      ready: named.includes(pool) ? (ready?.status ?? 'Unknown') : 'Removed',
      reason: shown?.reason,
      message: shown?.message,
      since: shown?.lastTransitionTime,
      failures: p?.controller?.failures,
      retryAfter: p?.controller?.retryAfter,
    };
  });
}

/**
 * What replacement of the nodes is pending, and why: as the reconciler last read it from the templates (the roll keys),
 * else a config the live stack does not carry yet (a status of a release before roll keys, or one not looked at yet).
 */
function pendingOf(
  s: { readonly pendingRoll?: string; readonly cloudConfigChecksum?: string } | undefined,
  desired: string | undefined,
): string | undefined {
  if (s?.pendingRoll) return s.pendingRoll;
  return desired && s?.cloudConfigChecksum && desired !== s.cloudConfigChecksum ? 'config' : undefined;
}

/** The status table, from the store alone (no AWS call): desired vs live checksum, stack status, Ready and why. */
export async function statusRows(
  clustersDir: string,
  templatesDir: string,
  stateDir?: string,
  storeOpts?: StoreOptions,
): Promise<StatusRow[]> {
  const opened = createStore(storeOpts ?? fileStore(clustersDir, stateDir));
  const store = opened.store;
  const templates = listTemplates(templateDirectory(templatesDir));
  // The pins the daemon recorded: a pool on an image channel shows the release it is pinned to, as the daemon derives it.
  const channels = createChannelStore(storeOpts ?? fileStore(clustersDir, stateDir));
  const images = imageResolver(channels ? (await channels.load().finally(() => channels.close?.())).channels : []);
  const records = await store.list().finally(() => {
    opened.close();
  });
  // A store that keeps the status of removed objects (the file store) still shows their stacks.
  const gone = (opened.history?.statusNames() ?? []).filter((n) => !records.some((r) => r.name === n));
  // A removed object's status that cannot be read is a row that says why (exit 1), as for a present object.
  const unreadableGone = (name: string, e: unknown): ClusterRecord => ({
    name,
    source: name,
    parseProblems: [{ file: `${name} (object removed)`, path: '', message: (e as Error).message }],
    generation: 0,
    resourceVersion: 'unreadable',
  });
  const all = [
    ...records,
    ...(await Promise.all(gone.map((n) => store.get(n).catch((e: unknown) => unreadableGone(n, e))))).filter(
      (r) => r !== undefined,
    ),
  ];
  return all
    .map((r) => {
      const unreadable =
        r.resourceVersion === 'unreadable'
          ? r.parseProblems.map((p) => `${p.file}: ${p.message}`).join('; ')
          : undefined;
      const v =
        r.raw && !unreadable
          ? derive(r.raw, { file: r.source, templateSource: templates.source, templates, images })
          : undefined;
      // A config that does not render is shown as '-': `worker-stacks render` says why. The shared stack carries the
      // default pool's config (or the first pool's, when every pool has its own stack).
      const sharedPool = v?.cluster ? stackUnits(v.cluster)[0].pool : undefined;
      const desired = (sharedPool ? v?.configs?.get(sharedPool) : undefined)?.checksum ?? v?.config?.checksum;
      const ready = getCondition(r.status, 'Ready');
      const is = (t: 'Stalled' | 'Degraded' | 'Progressing') =>
        getCondition(r.status, t)?.status === 'True' ? getCondition(r.status, t) : undefined;
      const shown =
        is('Stalled') ?? is('Degraded') ?? is('Progressing') ?? getCondition(r.status, 'Progressing') ?? ready;
      const spec = (r.raw as { spec?: { account?: unknown; region?: unknown } } | undefined)?.spec;
      const arn = r.status?.stackId?.split(':');
      return {
        cluster: r.name,
        account: typeof spec?.account === 'string' ? spec.account : arn?.[4],
        region: typeof spec?.region === 'string' ? spec.region : arn?.[3],
        generation: r.generation,
        observedGeneration: r.status?.observedGeneration,
        desiredChecksum: desired,
        liveChecksum: r.status?.cloudConfigChecksum,
        // In sync: the live stack runs this generation's inputs, not only its node config. An image or size change keeps
        // the checksum, so equal checksums alone would say yes for a change that stalled or rolled back.
        inSync: Boolean(
          desired &&
          desired === r.status?.cloudConfigChecksum &&
          ready?.status === 'True' &&
          ready.observedGeneration === r.generation,
        ),
        pending: pendingOf(r.status, desired),
        stack: workerStackName(r.name),
        stackStatus: r.status?.stackStatus,
        ready: unreadable
          ? 'Unreadable'
          : r.raw === undefined && !records.includes(r)
            ? 'Removed'
            : (ready?.status ?? 'Unknown'),
        reason: unreadable
          ? 'StatusUnreadable'
          : (shown?.reason ??
            (v?.stage === 'validate' ? 'InvalidSpec' : v?.stage === 'render' ? 'RenderFailed' : undefined)),
        message: unreadable
          ? unreadable.replace(/\s*\n\s*/g, '; ')
          : (shown?.message ??
            (v?.stage === 'validate'
              ? 'invalid object: run worker-stacks validate'
              : v?.stage === 'render'
                ? 'the node config does not render: run worker-stacks render'
                : undefined)),
        since: shown?.lastTransitionTime,
        failures: r.status?.controller?.failures,
        retryAfter: r.status?.controller?.retryAfter,
        lastConfigChange: r.status?.lastConfigChange,
        lastConfigChangeTime: r.status?.lastConfigChangeTime,
        paused: Boolean(v?.cluster?.spec.paused),
        rolls: v?.cluster ? describeRollout(specRollout(v.cluster.spec)) : undefined,
        unreadable,
        status: r.status,
        pools: poolRows(r, v?.cluster, v?.configs),
      };
    })
    .sort((a, b) =>
      statusGroup(a) !== statusGroup(b) ? (statusGroup(a) < statusGroup(b) ? -1 : 1) : a.cluster < b.cluster ? -1 : 1,
    );
}

/** `<account>/<region>`: one daemon, many accounts, so the table groups by where each cluster lives. */
export function statusGroup(r: Pick<StatusRow, 'account' | 'region'>): string {
  return `${r.account ?? '-'}/${r.region ?? '-'}`;
}
