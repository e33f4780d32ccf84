import { StackSummary } from '../../../model/ports/cloudformation-port';
import { OWNER_TAG, stackOwner } from '../../../core/naming';
import { ClusterRecord } from '../../../model/ports/cluster-store';
import { CONDITIONS, Reason } from '../workflow/conditions';
import { TASK } from '../workflow/context';
import { Observed } from '../workflow/state';
import { need, task } from '../workflow/task';

/*
 * One stack, one owner. A stack's name comes from the object's name, and names are not unique across namespaces,
 * shards or daemons: two objects named prod-eu1 (team A's and team B's, in one account and region) would both deploy
 * WorkerStack-prod-eu1, each taking the other's config for drift. So every stack carries the tag
 * worker-stacks.io/owner (lib/core/naming.ts stackOwner), set by the change set that creates it, and before anything
 * is written to a stack (change set, execute, recovery, delete) or recorded of it, the live stack's tag must name
 * this object. This holds whatever the stores see: a shard's label selector, a namespace, another daemon.
 */

/** The owner tag value of a record's object (its metadata.name: a refused duplicate's key is `<namespace>/<name>`). */
export function ownerOf(record: ClusterRecord): string {
  return stackOwner(objectName(record), record.namespace);
}

/** The cluster name of a record's object, as its stacks are named. */
export function objectName(record: ClusterRecord): string {
  const name = (record.raw as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
  return typeof name === 'string' ? name : record.name;
}

export type Claim =
  | { readonly kind: 'ours' }
  /** A stack without an owner tag that this object may adopt: its status recorded it, or the store has one tenant. */
  | { readonly kind: 'adopt' }
  | { readonly kind: 'refused'; readonly reason: Reason; readonly message: string };

/**
 * Whether this object may write to `stack` (its tags read from the stack itself). An untagged stack (made by a
 * release before owner tags, by hand, or by `cdk deploy` of an older app) is adopted only by an object that recorded
 * that very stack (its status' stackId, or an execution of its own under way), or by the file store, whose objects
 * are one directory with unique names: a new object in another namespace cannot adopt a stack it never deployed.
 */
export function claimOf(
  record: ClusterRecord,
  stack: StackSummary,
  recorded: { readonly stackId?: string; readonly executing: boolean },
): Claim {
  const ours = ownerOf(record);
  const owner = stack.tags?.[OWNER_TAG];
  if (owner === ours) return { kind: 'ours' };
  const fix = `rename this object (metadata.name) or deploy it to another account or region; to hand the stack over on purpose, an operator with rights in its account sets its tag ${OWNER_TAG}=${ours}`;
  if (owner !== undefined)
    return {
      kind: 'refused',
      reason: 'StackOwnedElsewhere',
      message: `stack ${stack.name} belongs to ${owner} (tag ${OWNER_TAG}), not to ${ours}: nothing was written to it; ${fix}`,
    };
  if (record.namespace === undefined || recorded.stackId === stack.id || recorded.executing) return { kind: 'adopt' };
  return {
    kind: 'refused',
    reason: 'StackNotAdopted',
    message: `stack ${stack.name} exists without an owner tag (${OWNER_TAG}) and ${ours} never recorded it: nothing was written to it; if it is this object's stack, an operator with rights in its account sets its tag ${OWNER_TAG}=${ours}; otherwise ${fix.split(';')[0]}`,
  };
}

/**
 * 3b. The stack observed must be this object's before any task records it or writes to it. A stack another object
 * owns is left alone: Stalled (it needs a human: a rename, or a hand-over), no stack field recorded, no slot held.
 * A stack read without its tags (a listing of stacks in progress) is described first, unless it is the one recorded.
 */
export const claim = task<Observed>()({
  name: TASK.claim,
  deps: ['slots'],
  when: (_ctx, o) => Boolean(o.stack),
  async run(ctx, o) {
    let stack = need(o.stack, 'the stack observed');
    if (stack.tags === undefined) {
      // A poll of stacks in progress (ListStacks) carries no tags: the stack this object recorded is taken as its own
      // until a read with tags (the next full listing, a describe) says otherwise; any other is described first.
      if (stack.id === ctx.status.stackId) return undefined;
      stack = (await ctx.region.cfn.describeStack(stack.name)) ?? stack;
    }
    const verdict = claimOf(ctx.record, stack, {
      stackId: ctx.status.stackId,
      executing: Boolean(ctx.recorder.controller.executing),
    });
    if (verdict.kind !== 'refused') return undefined;
    // Not ours: its operation in progress is not a roll of ours either.
    ctx.deps.slots?.observed(ctx.unit.slot, false);
    o.log.error({ reason: verdict.reason, stack: stack.name, owner: stack.tags?.[OWNER_TAG] ?? null }, verdict.message);
    ctx.recorder.stage(
      { observedGeneration: ctx.generation },
      CONDITIONS.stalled(verdict.reason, verdict.message, { ready: false }),
    );
    return { result: 'stalled', message: verdict.message };
  },
});
