import {
  CloudFormationClient,
  waitUntilStackCreateComplete,
  waitUntilStackDeleteComplete,
  waitUntilStackImportComplete,
  waitUntilStackUpdateComplete,
} from '@aws-sdk/client-cloudformation';
import { CloudFormationPort, isInProgress, StackSummary, WaitOptions } from '../../model/ports/cloudformation-port';

/** How the SDK adapter waits: its client, the waiters' delays (seconds) and how often it reads events (ms). */
export interface WaiterSettings {
  readonly client: CloudFormationClient;
  readonly delay: { readonly min: number; readonly max: number };
  readonly eventPollMs: number;
}

/**
 * CloudFormationPort.waitForStack with the SDK's own waiters (the waiter of the operation the stack is in), reading
 * the stack's new events for progress meanwhile, until the stack leaves *_IN_PROGRESS, the timeout passes or the
 * signal aborts.
 */
export async function waitWithWaiters(
  port: Pick<CloudFormationPort, 'describeStack' | 'stackEvents'>,
  sdk: WaiterSettings,
  stackName: string,
  opts: WaitOptions,
): Promise<StackSummary | undefined> {
  const deadline = Date.now() + opts.timeoutMs;
  let current = await port.describeStack(stackName);
  let lastEvent = opts.onEvent ? (await port.stackEvents(stackName)).at(-1)?.id : undefined;
  const aborted = new Promise<void>((r) =>
    opts.signal?.aborted ? r() : opts.signal?.addEventListener('abort', () => r(), { once: true }),
  );
  while (
    current &&
    isInProgress(current.status) &&
    current.status !== 'REVIEW_IN_PROGRESS' &&
    Date.now() < deadline &&
    !opts.signal?.aborted
  ) {
    // A waiter stops early (TIMEOUT) when its next delay would pass its maxWaitTime, and refuses a maxWaitTime not above
    // minDelay: with less time than that left, sleep to the deadline and look once more, instead of starting waiters in a tight loop.
    const remainingSeconds = Math.floor((deadline - Date.now()) / 1000);
    const waiting: Promise<unknown> =
      remainingSeconds > sdk.delay.min
        ? waiterFor(current.status)(
            {
              client: sdk.client,
              maxWaitTime: remainingSeconds,
              minDelay: sdk.delay.min,
              maxDelay: sdk.delay.max,
              abortSignal: opts.signal,
            },
            { StackName: current.id },
          ).catch(() => undefined)
        : Promise.race([aborted, new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())))]);
    // Set by the waiter's callback while this loop awaits: a field, so it is read afresh each time round.
    const waiter = { settled: false };
    void waiting.finally(() => {
      waiter.settled = true;
    });
    // Progress: every new stack event while the waiter waits.
    while (!waiter.settled && opts.onEvent) {
      await Promise.race([waiting, aborted, new Promise((r) => setTimeout(r, sdk.eventPollMs))]);
      if (opts.signal?.aborted) break;
      const fresh = await port.stackEvents(current.id, lastEvent);
      for (const e of fresh) opts.onEvent(e);
      lastEvent = fresh.at(-1)?.id ?? lastEvent;
    }
    await Promise.race([waiting, aborted]);
    current = await port.describeStack(current.id);
  }
  return current;
}

function waiterFor(status: string) {
  // A create's rollback (ROLLBACK_IN_PROGRESS) ends in ROLLBACK_COMPLETE or ROLLBACK_FAILED, which the create waiter
  // takes as terminal; the "rollback" waiter is for update rollbacks and would poll ROLLBACK_COMPLETE until the timeout.
  if (status.startsWith('CREATE_') || status.startsWith('ROLLBACK_')) return waitUntilStackCreateComplete;
  if (status.startsWith('DELETE_')) return waitUntilStackDeleteComplete;
  if (status.startsWith('IMPORT_')) return waitUntilStackImportComplete;
  return waitUntilStackUpdateComplete;
}
