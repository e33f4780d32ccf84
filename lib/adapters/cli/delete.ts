import { Command } from 'commander';
import { configBucketName, poolStackName, workerStackName } from '../../core/naming';
import { DEFAULT_POOL } from '../../model/cluster/pools/pools';
import { ClusterRecord, ClusterStore } from '../../model/ports/cluster-store';
import { createDeps } from './wiring';
import {
  ConfigObjectsDeleted,
  deleteClusterConfigObjects,
  deleteStackAndWait,
  teardownOrder,
} from '../../engines/deploy';
import { rawPoolNames } from '../../model/cluster/pools/raw-pools';
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
  for (const stackName of teardownOrder(
    name,
    t.record?.raw,
    (t.record?.status?.pools ?? []).map((p) => p.stackName),
  )) {
    const failed = await deleteStack(t, stackName, io);
    if (failed !== undefined) return failed;
    if (stackName !== workerStackName(name)) io.out(`${stackName}\tdeleted\n`);
  }
  // The stack is gone, so no launch template points to its config objects any more: they go too.
  const objects = t.deps.aws(t.region, t.expected).configObjects;
  if (objects)
    sayConfigObjects(
      name,
      await deleteClusterConfigObjects(objects, configBucketName(t.expected ?? t.account, t.region), name),
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
    record && rawPoolNames(record.raw).includes(pool)
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
  const left = await deleteStackAndWait(t.deps.aws(t.region, t.expected).cfn, stackName, {
    timeoutMs: t.waitTimeoutMs,
    log: t.deps.log,
  });
  if (!left) return undefined;
  io.err(
    `error: ${left.name} is ${left.status}; read its events, fix what blocks the deletion, and run delete again\n`,
  );
  return EXIT.invalid;
}

/** The object's spec as read (before validation), if there is an object. */
function specOf(record: ClusterRecord | undefined): { region?: string; account?: string } | undefined {
  return (record?.raw as { spec?: { region?: string; account?: string } } | undefined)?.spec;
}

/** The account of a CloudFormation stack ARN (arn:aws:cloudformation:<region>:<account>:stack/...). */
function arnAccount(arn: string | undefined): string | undefined {
  return arn?.split(':')[4] || undefined;
}

/** What became of the deleted cluster's config objects; a failure is a warning with the prefix to clean by hand. */
function sayConfigObjects(cluster: string, r: ConfigObjectsDeleted, io: Io): void {
  const where = `s3://${r.bucket}/${r.prefix}`;
  if (r.deleted) io.out(`${cluster}\tdeleted ${r.deleted} config object${r.deleted === 1 ? '' : 's'} from ${where}\n`);
  if (r.failed && r.failed.count < 0)
    io.err(`warning: the config objects under ${where} were not deleted: ${r.failed.message}; delete them by hand\n`);
  else if (r.failed)
    io.err(
      `warning: ${r.failed.count} config objects under ${where} were not deleted (${r.failed.key}: ${r.failed.message}); delete them by hand\n`,
    );
}
