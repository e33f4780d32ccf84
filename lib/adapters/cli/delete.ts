import { Command } from 'commander';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { isInProgress } from '../../model/ports/cloudformation-port';
import { configBucketName, configKeyPrefix, poolStackName, workerStackName } from '../../core/naming';
import { DEFAULT_POOL } from '../../model/cluster/pools';
import { ClusterRecord, ClusterStore } from '../../model/ports/cluster-store';
import { ConfigObjectStore, planCleanup } from '../../platform/aws/config-objects';
import { createDeps } from './wiring';
import { assumeRoleFlags, assumeRoleFrom } from './accounts';
import { dirFlags, EXIT, Io } from './context';
import { awsFlags, WiringFlagOptions, wiringFrom } from './aws-flags';

/** The parsed flags of `delete`. */
interface DeleteOptions extends WiringFlagOptions {
  /** --pool <name>. @default none: the whole cluster */
  readonly pool?: string;
  /** --region <region>. @default the cluster object's */
  readonly region?: string;
  /** --yes. @default false: nothing is deleted */
  readonly yes?: boolean;
  /** --force. @default false */
  readonly force?: boolean;
}

/** What `delete` acts with once its checks passed: the cluster's CloudFormation, in its account and region. */
interface Target {
  readonly deps: ReturnType<typeof createDeps>['deps'];
  readonly store: ClusterStore;
  readonly record: ClusterRecord | undefined;
  readonly region: string;
  readonly account: string;
  readonly expected: string | undefined;
  readonly waitTimeoutMs: number;
}

/** A pool's name as the object takes it (a DNS label): anything else names no stack of ours. */
const POOL_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** `worker-stacks delete <cluster>` and `worker-stacks delete <cluster> --pool <pool>`. */
export function registerDelete(program: Command, io: Io, done: (code: number) => void): void {
  assumeRoleFlags(awsFlags(dirFlags(program.command('delete'))))
    .description(
      "delete a cluster's worker stacks (its pools' first), wait, then clear its status; with --pool, only the stack of a pool removed from the object",
    )
    .argument('<cluster>', 'cluster name')
    .option(
      '--pool <name>',
      "only WorkerStack-<cluster>-Pool-<name>, of a pool no longer in the object; clears the pool's status entry",
    )
    .option('--region <region>', 'region of the stack when the object is gone')
    .option('--yes', 'really delete (required)')
    .option(
      '--force',
      'delete even though the cluster object still exists (the reconciler would create the stack again)',
    )
    .action(async (name: string, opts: DeleteOptions) =>
      done(opts.pool === undefined ? await deleteCluster(name, opts, io) : await deletePool(name, opts.pool, opts, io)),
    );
}

async function deleteCluster(name: string, opts: DeleteOptions, io: Io): Promise<number> {
  if (!opts.yes) {
    io.err(`error: deleting ${workerStackName(name)} removes its nodes; run again with --yes\n`);
    return EXIT.usage;
  }
  // A record without an object (a status file left behind) is no object that would create the stack again.
  const t = await target(name, opts, io, workerStackName(name), (record) =>
    record && specOf(record) && !opts.force
      ? `${record.source} still exists, so the next reconcile would create ${workerStackName(name)} again; remove the object first, or pass --force`
      : undefined,
  );
  if (typeof t === 'number') return t;
  // The pools' own stacks first (they import the shared stack's exports), then the shared stack.
  for (const stackName of [...poolStacksOf(name, t.record), workerStackName(name)]) {
    const failed = await deleteStack(t, stackName, io);
    if (failed !== undefined) return failed;
    if (stackName !== workerStackName(name)) io.out(`${stackName}\tdeleted\n`);
  }
  // The stack is gone, so no launch template points to its config objects any more: they go too.
  await deleteConfigObjects(
    t.deps.aws(t.region, t.expected).configObjects,
    configBucketName(t.expected ?? t.account, t.region),
    name,
    io,
  );
  if (t.record) await t.store.clearStatus(name, t.record.resourceVersion);
  io.out(`${workerStackName(name)}\tdeleted\n`);
  return EXIT.ok;
}

/**
 * One pool's own stack, of a pool removed from the object: what the reconciler does in turn (tasks/pool-removal.ts),
 * now. Its nodes are terminated with it. The pool default lives in the shared stack, and a pool still in the object
 * would be created again: both are refused.
 */
async function deletePool(name: string, pool: string, opts: DeleteOptions, io: Io): Promise<number> {
  if (!POOL_NAME.test(pool)) {
    io.err(
      `error: --pool ${pool}: a pool's name is a DNS label (lowercase letters, digits and '-'); nothing was deleted\n`,
    );
    return EXIT.usage;
  }
  const stackName = poolStackName(name, pool);
  if (pool === DEFAULT_POOL) {
    io.err(
      `error: the pool default lives in the shared stack ${workerStackName(name)}, not in a stack of its own: remove it from the object and the reconciler updates the shared stack without it (or delete the whole cluster: worker-stacks delete ${name} --yes); nothing was deleted\n`,
    );
    return EXIT.usage;
  }
  if (!opts.yes) {
    io.err(`error: deleting ${stackName} terminates the nodes of pool ${pool}; run again with --yes\n`);
    return EXIT.usage;
  }
  const t = await target(name, opts, io, stackName, (record) =>
    record && rawPools(record.raw).includes(pool)
      ? `pool ${pool} is still in ${record.source}: remove it from the object first; the reconciler then deletes ${stackName} in turn, once the cluster's other stacks are settled (worker-stacks status shows what it waits for)`
      : undefined,
  );
  if (typeof t === 'number') return t;
  const failed = await deleteStack(t, stackName, io);
  if (failed !== undefined) return failed;
  // Read again: the daemon may have written the status meanwhile (its entry may even be gone already).
  const fresh = await t.store.get(name);
  const entries = fresh?.status?.pools;
  if (fresh?.status && entries?.some((p) => p.name === pool)) {
    const rest = entries.filter((p) => p.name !== pool);
    await t.store.writeStatus(name, { ...fresh.status, pools: rest.length ? rest : undefined }, fresh.resourceVersion);
  }
  io.out(`${stackName}\tdeleted\n`);
  return EXIT.ok;
}

/**
 * The checks every delete makes before AWS is touched: the object as `refuse` judges it, a region, and the credentials
 * of the stack's own account (the reconciler's rule). The exit code when one fails, said on stderr.
 */
async function target(
  name: string,
  opts: DeleteOptions,
  io: Io,
  stackName: string,
  refuse: (record: ClusterRecord | undefined) => string | undefined,
): Promise<Target | number> {
  const wiring = { ...wiringFrom(opts), assumeRole: assumeRoleFrom(opts) };
  const { deps, store } = createDeps(wiring);
  const record = await store.get(name);
  const refused = refuse(record);
  if (refused) {
    io.err(`error: ${refused}\n`);
    return EXIT.usage;
  }
  const spec = specOf(record);
  const region = opts.region ?? spec?.region;
  if (!region) {
    io.err(`error: no cluster object ${name} to take the region from; pass --region\n`);
    return EXIT.usage;
  }
  // The same safety as the reconciler: never act on a cluster's stack with another account's credentials.
  const recorded = record?.status?.pools?.find((p) => p.stackName === stackName)?.stackId ?? record?.status?.stackId;
  const expected = spec?.account ?? arnAccount(recorded);
  const account = await deps.identity.account(expected ? { account: expected, region } : undefined);
  if (expected && expected !== account) {
    io.err(
      `error: credentials are for account ${account}, ${stackName} is in ${expected}; use credentials of that account; nothing was deleted\n`,
    );
    return EXIT.invalid;
  }
  return { deps, store, record, region, account, expected, waitTimeoutMs: wiring.waitTimeoutMs };
}

/** Deletes one stack and waits for it to go: undefined once gone (or never there), else the exit code, said. */
async function deleteStack(t: Target, stackName: string, io: Io): Promise<number | undefined> {
  const { cfn } = t.deps.aws(t.region, t.expected);
  const stack = await cfn.describeStack(stackName);
  if (!stack) return undefined;
  if (isInProgress(stack.status)) await cfn.waitForStack(stack.id, { timeoutMs: t.waitTimeoutMs });
  await cfn.deleteStack(stack.id, `ws-delete-${sha256Hex(stack.id).slice(0, 32)}`);
  const final = await cfn.waitForStack(stack.id, {
    timeoutMs: t.waitTimeoutMs,
    onEvent: (e) => t.deps.log.info({ event: e }, `${e.logicalId} ${e.status}`),
  });
  if (final && final.status !== 'DELETE_COMPLETE') {
    io.err(
      `error: ${stack.name} is ${final.status}; read its events, fix what blocks the deletion, and run delete again\n`,
    );
    return EXIT.invalid;
  }
  return undefined;
}

/** The object's spec as read (before validation), if there is an object. */
function specOf(record: ClusterRecord | undefined): { region?: string; account?: string } | undefined {
  return (record?.raw as { spec?: { region?: string; account?: string } } | undefined)?.spec;
}

/** The pools the object names that have stacks of their own (spec.pools but `default`), read before validation. */
function rawPools(raw: unknown): string[] {
  const pools = (raw as { spec?: { pools?: unknown } } | undefined)?.spec?.pools;
  return Array.isArray(pools)
    ? pools.flatMap((p: unknown) => {
        const pool = (p as { name?: unknown } | null)?.name;
        return typeof pool === 'string' && pool !== DEFAULT_POOL ? [pool] : [];
      })
    : [];
}

/**
 * The stacks of a cluster's pools that have their own: those the object names (spec.pools but `default`) and those its
 * status recorded (the object may be gone; a pool removed since). Never guessed from stack names: the stacks of the
 * account are not all this cluster's, and the object says which of its pools exist.
 */
function poolStacksOf(name: string, record: ClusterRecord | undefined): string[] {
  const named = rawPools(record?.raw).map((pool) => poolStackName(name, pool));
  return [...new Set([...named, ...(record?.status?.pools ?? []).map((p) => p.stackName)])];
}

/** The account of a CloudFormation stack ARN (arn:aws:cloudformation:<region>:<account>:stack/...). */
function arnAccount(arn: string | undefined): string | undefined {
  return arn?.split(':')[4] || undefined;
}

/** Every config object of a deleted cluster; a failure is a warning with the prefix to clean by hand, never a failed delete. */
async function deleteConfigObjects(
  store: ConfigObjectStore | undefined,
  bucket: string,
  cluster: string,
  io: Io,
): Promise<void> {
  if (!store) return;
  const prefix = configKeyPrefix(cluster);
  try {
    const { remove } = planCleanup(await store.list(bucket, prefix), { keepLast: 0 });
    const r = remove.length ? await store.delete(bucket, remove) : { deleted: [], errors: [] };
    if (r.deleted.length)
      io.out(
        `${cluster}\tdeleted ${r.deleted.length} config object${r.deleted.length === 1 ? '' : 's'} from s3://${bucket}/${prefix}\n`,
      );
    if (r.errors.length)
      io.err(
        `warning: ${r.errors.length} config objects under s3://${bucket}/${prefix} were not deleted (${r.errors[0].key}: ${r.errors[0].message}); delete them by hand\n`,
      );
  } catch (e) {
    io.err(
      `warning: the config objects under s3://${bucket}/${prefix} were not deleted: ${(e as Error).message.split('\n')[0]}; delete them by hand\n`,
    );
  }
}
