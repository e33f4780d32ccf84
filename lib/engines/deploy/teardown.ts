import { sha256Hex } from '../../model/cloudconfig/checksum';
import { CloudFormationPort, isInProgress, StackSummary } from '../../model/ports/cloudformation-port';
import { ConfigObjectStore, planCleanup } from '../../platform/aws/config-objects';
import { configKeyPrefix, poolStackName, workerStackName } from '../../core/naming';
import { rawPoolNames } from '../../model/cluster/pools/raw-pools';
import { Logger } from '../../core/logger';

/**
 * A cluster's stacks in the order they are deleted: the pools' own stacks first (they import the shared stack's
 * exports, which CloudFormation keeps while imported), then the shared stack. The pools are those the object names
 * and those its status recorded (the object may be gone, a pool removed since); never guessed from stack names: the
 * account's stacks are not all this cluster's. The reconciler's finalizer and `worker-stacks delete` both use it.
 */
export function teardownOrder(cluster: string, raw: unknown, recordedPoolStacks: readonly string[]): string[] {
  const named = rawPoolNames(raw).map((pool) => poolStackName(cluster, pool));
  return [...new Set([...named, ...recordedPoolStacks]), workerStackName(cluster)];
}

export interface DeleteAndWaitOptions {
  readonly timeoutMs: number;
  readonly log: Logger;
}

/**
 * Deletes one stack and waits until it is gone (the CLI's way; the reconciler requeues instead of waiting): the final
 * summary when the deletion did not complete, undefined once gone (or never there). A stack in progress is waited on
 * first: CloudFormation refuses to delete it.
 */
export async function deleteStackAndWait(
  cfn: CloudFormationPort,
  stackName: string,
  opts: DeleteAndWaitOptions,
): Promise<StackSummary | undefined> {
  const stack = await cfn.describeStack(stackName);
  if (!stack) return undefined;
  if (isInProgress(stack.status)) await cfn.waitForStack(stack.id, { timeoutMs: opts.timeoutMs });
  await cfn.deleteStack(stack.id, `ws-delete-${sha256Hex(stack.id).slice(0, 32)}`);
  const final = await cfn.waitForStack(stack.id, {
    timeoutMs: opts.timeoutMs,
    onEvent: (e) => opts.log.info({ event: e }, `${e.logicalId} ${e.status}`),
  });
  return final && final.status !== 'DELETE_COMPLETE' ? final : undefined;
}

/** What became of a deleted cluster's config objects. */
export interface ConfigObjectsDeleted {
  readonly bucket: string;
  readonly prefix: string;
  readonly deleted: number;
  /** The first object that was not deleted, and why; undefined when all went. */
  readonly failed?: { readonly count: number; readonly key: string; readonly message: string };
}

/**
 * Every config object of a cluster whose stacks are gone (no launch template points to them any more). A failure is
 * reported, never thrown: the stacks are deleted either way, and the objects can be removed by hand.
 */
export async function deleteClusterConfigObjects(
  store: ConfigObjectStore,
  bucket: string,
  cluster: string,
): Promise<ConfigObjectsDeleted> {
  const prefix = configKeyPrefix(cluster);
  try {
    const { remove } = planCleanup(await store.list(bucket, prefix), { keepLast: 0 });
    const r = remove.length ? await store.delete(bucket, remove) : { deleted: [], errors: [] };
    return {
      bucket,
      prefix,
      deleted: r.deleted.length,
      ...(r.errors.length
        ? { failed: { count: r.errors.length, key: r.errors[0].key, message: r.errors[0].message } }
        : {}),
    };
  } catch (e) {
    return {
      bucket,
      prefix,
      deleted: 0,
      failed: { count: -1, key: prefix, message: (e as Error).message.split('\n')[0] },
    };
  }
}
