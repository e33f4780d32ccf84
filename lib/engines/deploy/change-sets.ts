import { AssetPublisher } from '../../platform/aws/s3-publisher';
import {
  ChangeSetInfo,
  CloudFormationPort,
  firstFailure,
  isComplete,
  RollbackConfiguration,
  StackEvent,
  StackSummary,
} from '../../model/ports/cloudformation-port';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { WorkerStacksError } from '../../core/errors';
import { CLUSTER_TAG } from '../../core/naming';
import { Logger } from '../../core/logger';
import { SynthesizedStack } from '../synthesis/synthesize';

/** What a deployment needs of a region: its CloudFormation and where assets are published. */
export interface DeployClients {
  readonly cfn: CloudFormationPort;
  readonly publisher: AssetPublisher;
}

export const NO_CHANGES = /didn't contain changes|No updates are to be performed/i;

export interface EnsureChangeSetInput {
  readonly synth: SynthesizedStack;
  /** Current stack, undefined when it does not exist. */
  readonly stack?: StackSummary;
  /** Deterministic name: a retried step finds and reuses it. */
  readonly name: string;
  readonly description: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** @default CAPABILITY_IAM (worker stacks name no IAM resource; the bootstrap stack's roles are named) */
  readonly capabilities?: readonly string[];
  /** Alarms that roll the update back (spec.rollout). @default none */
  readonly rollbackConfiguration?: RollbackConfiguration;
  /**
   * A change set of this name that already executed to completion is an earlier operation, not this one (the caller
   * records its own executions before making them): the next free name (`<name>-2`, `-3` …) is used instead. Without
   * it, the same stack state seen twice (an out-of-band change made again, and no LastUpdatedTime to tell them apart)
   * would find the first repair's change set and never repair the second. @default false: it counts as executed
   */
  readonly executedIsEarlier?: boolean;
}

export type ChangeSetState =
  | { kind: 'ready'; info: ChangeSetInfo }
  | { kind: 'no-changes' }
  | { kind: 'executed'; name: string }
  | { kind: 'failed'; info: ChangeSetInfo };

/** Names tried after an executed one (see executedIsEarlier) before giving up on finding a free one. */
const MAX_NAME_SUFFIX = 20;

/**
 * Creates the change set (CREATE or UPDATE, explicitly) unless one with the
 * same name exists, and waits for it. The one path every deployment takes:
 * the reconciler's workflow and `worker-stacks bootstrap` alike.
 */
export async function ensureChangeSet(clients: DeployClients, input: EnsureChangeSetInput): Promise<ChangeSetState> {
  const { cfn, publisher } = clients;
  const stackName = input.synth.stackName;
  let name = input.name;
  let info = input.stack ? await cfn.describeChangeSet(stackName, name) : undefined;
  for (
    let n = 2;
    input.executedIsEarlier && info?.executionStatus === 'EXECUTE_COMPLETE' && n <= MAX_NAME_SUFFIX;
    n++
  ) {
    name = `${input.name}-${n}`;
    info = await cfn.describeChangeSet(stackName, name);
  }
  if (info?.executionStatus === 'EXECUTE_IN_PROGRESS' || info?.executionStatus === 'EXECUTE_COMPLETE')
    return { kind: 'executed', name };
  // A change set that cannot be executed (failed, obsolete, or executed and rolled back) is replaced: a retry must really retry.
  if (
    info &&
    (info.status === 'FAILED' || info.executionStatus === 'OBSOLETE' || info.executionStatus === 'EXECUTE_FAILED') &&
    !NO_CHANGES.test(info.statusReason ?? '')
  ) {
    await cfn.deleteChangeSet(stackName, name);
    info = undefined;
  }
  if (!info) {
    const t = input.synth.templateAsset;
    await cfn.createChangeSet({
      stackName,
      changeSetName: name,
      type: !input.stack || input.stack.status === 'REVIEW_IN_PROGRESS' ? 'CREATE' : 'UPDATE',
      templateBody: t ? undefined : input.synth.templateBody,
      templateUrl: t ? publisher.templateUrl(t) : undefined,
      capabilities: input.capabilities ?? ['CAPABILITY_IAM'],
      tags: input.tags,
      description: input.description,
      clientToken: `${name}-create`,
      rollbackConfiguration: input.rollbackConfiguration,
    });
  }
  info = await cfn.waitForChangeSet(stackName, name, input.timeoutMs);
  if (info.status === 'FAILED' && NO_CHANGES.test(info.statusReason ?? '')) {
    await cfn.deleteChangeSet(stackName, name);
    return { kind: 'no-changes' };
  }
  return info.status === 'CREATE_COMPLETE' ? { kind: 'ready', info } : { kind: 'failed', info };
}

/**
 * ExecuteChangeSet's idempotency token, tied to the change set itself: a retried request (after a crash)
 * for the same change set is the same request, while a change set recreated under the same name after a
 * rolled-back execution is a new one (reusing the old token would make CloudFormation ignore it).
 */
export function executeToken(info: ChangeSetInfo): string {
  return `${info.name.slice(0, 60)}-exec-${sha256Hex(info.id).slice(0, 16)}`;
}

export interface DeployOptions {
  readonly log: Logger;
  readonly waitTimeoutMs: number;
  readonly changeSetTimeoutMs: number;
  /**
   * A change set of this name that executed to completion is an earlier deployment (ensureChangeSet's
   * executedIsEarlier): the same template deployed again after a restore must be a new change set. @default false
   */
  readonly executedIsEarlier?: boolean;
}

/** Publish, change set, execute, wait: a whole deployment of one stack that is not a cluster (the bootstrap stack). */
export async function deployStack(
  clients: DeployClients,
  synth: SynthesizedStack,
  name: string,
  opts: DeployOptions,
): Promise<StackSummary> {
  await clients.publisher.publish(synth.assets);
  const stack = await clients.cfn.describeStack(synth.stackName);
  const state = await ensureChangeSet(clients, {
    synth,
    stack,
    name,
    description: 'worker-stacks bootstrap',
    tags: { [CLUSTER_TAG]: 'bootstrap' },
    timeoutMs: opts.changeSetTimeoutMs,
    capabilities: ['CAPABILITY_IAM', 'CAPABILITY_NAMED_IAM'],
    executedIsEarlier: opts.executedIsEarlier,
  });
  if (state.kind === 'failed')
    throw new WorkerStacksError(`change set ${name} of ${synth.stackName} failed: ${state.info.statusReason}`, {
      hint: 'read the reason above; fix the template input and run again',
    });
  // By the name ensureChangeSet used: with executedIsEarlier, a free one after an executed change set of this name.
  if (state.kind === 'ready')
    await clients.cfn.executeChangeSet(synth.stackName, state.info.name, executeToken(state.info));
  const events: StackEvent[] = [];
  const final = await clients.cfn.waitForStack(synth.stackName, {
    timeoutMs: opts.waitTimeoutMs,
    onEvent: (e) => {
      events.push(e);
      opts.log.info(
        { event: { resource: e.logicalId, status: e.status, reason: e.reason } },
        `${e.logicalId} ${e.status}`,
      );
    },
  });
  if (!final || !isComplete(final.status)) {
    const cause = firstFailure(events);
    throw new WorkerStacksError(
      `${synth.stackName} ended ${final?.status ?? 'deleted'}${cause ? `: ${cause.logicalId} ${cause.reason}` : ''}`,
      {
        hint: 'read the stack events in the CloudFormation console, fix the cause, and run the command again',
      },
    );
  }
  return final;
}
