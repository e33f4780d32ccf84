import * as fs from 'node:fs';
import { TASK } from '../../../../lib/engines/reconciler/workflow/context';
import { Controller } from '../../../../lib/engines/reconciler/runtime/controller';
import { ReconcilerMetrics } from '../../../../lib/engines/reconciler/runtime/metrics';
import { ConfigBucketError, SynthesisError } from '../../../../lib/core/errors';
import { synthesizeStack } from '../../../../lib/engines/synthesis/synthesize';
import { before } from '../../../../lib/engines/reconciler/workflow/task';
import { complete } from '../../../fakes/fake-cloudformation';
import { Harness } from '../../../fakes/harness';

/**
 * --concurrency slots have one owner (the controller): a slot taken by a reconcile goes back when that reconcile ends,
 * however it ends, unless its stack is in progress (issue 25, item 2: a leaked slot halted the fleet).
 */

let h: Harness;
afterEach(() => h.cleanup());

const gauge = async (m: ReconcilerMetrics, name: string) =>
  (await m.registry.getSingleMetric(name)!.get()).values[0]?.value;

async function settle(controller: Controller) {
  return controller.runUntilSettled({
    deadlineMs: 120_000,
    now: () => h.clock.ms,
    sleep: async (ms) => h.cfn.advance(ms),
  });
}

describe('with --concurrency 1, a cluster that took the slot and then', () => {
  test.each([
    ['stalls at synthesis (a cdk-nag finding)', 'synthesis'],
    ['fails to publish (its account is not bootstrapped)', 'publish'],
    ['is deleted while it holds it', 'deleted'],
    ['is paused while its stack rolls', 'paused'],
  ])('%s leaves the slot to the others', async (_, how) => {
    // GIVEN two clusters, the first of which takes the slot first
    h = new Harness({ clusters: ['a-first', 'b-second'] });
    for (const n of ['a-first', 'b-second']) h.cfn.setDefault(h.stackName(n), complete(2));
    const metrics = new ReconcilerMetrics({ processMetrics: false });
    let deleted = false;
    const deps = h.deps({
      synthesizer: async (cluster, opts) => {
        if (how === 'synthesis' && cluster.metadata.name === 'a-first')
          throw new SynthesisError('AwsSolutions-EC23: the security group allows 0.0.0.0/0 on port 22');
        return synthesizeStack(cluster, opts);
      },
    });
    if (how === 'publish') {
      const publish = h.publisher.publish.bind(h.publisher);
      h.publisher.publish = async (assets) => {
        const cause = Object.assign(new Error('The specified bucket does not exist'), {
          name: 'NoSuchBucket',
          $metadata: { httpStatusCode: 404 },
        });
        if (assets.some((a) => a.objectKey.includes('a-first')))
          throw new ConfigBucketError(assets[0].bucketName, 'the config bucket does not exist', { cause });
        return publish(assets);
      };
    }
    const hooks = [
      before(TASK.publish, (ctx) => {
        if (how === 'deleted' && ctx.record.name === 'a-first' && !deleted) {
          deleted = true;
          fs.rmSync(h.objectFile('a-first'));
          throw new Error('the reconcile of a-first ends here (its object was deleted)');
        }
      }),
    ];
    const controller = new Controller(deps, { concurrency: 1, workers: 1, metrics, hooks });
    if (how === 'paused') {
      // a-first's stack is rolling (it holds the slot) when it is paused; b-second waits for the slot meanwhile
      h.cfn.setDefault(h.stackName('a-first'), complete(4));
      await controller.runPass();
      expect(h.condition('Progressing', 'b-second')?.reason).toBe('WaitingForSlot');
      h.edit('a-first', (raw) => (raw.spec.paused = true));
    } else if (how === 'deleted') {
      await controller.runPass();
      await controller.reconcileKey('a-first'); // the watch's event for the deletion
    }

    // WHEN the controller runs until the fleet settles
    const outcomes = await settle(controller);

    // THEN the other cluster rolled, and no slot is held once nothing is in progress
    expect(outcomes.get('b-second')?.result).toBe('applied');
    expect(h.condition('Ready', 'b-second')?.status).toBe('True');
    expect(controller.slots.size).toBe(0);
    expect(await gauge(metrics, 'worker_stacks_slots_held')).toBe(0);
    expect(await gauge(metrics, 'worker_stacks_stacks_in_progress')).toBe(0);
  });
});

test('a slot is held across reconciles while the stack is in progress, and only then', async () => {
  // GIVEN two clusters and one slot, the first one's update taking 4 polls
  h = new Harness({ clusters: ['a-first', 'b-second'] });
  h.cfn.setDefault(h.stackName('a-first'), complete(4));
  const metrics = new ReconcilerMetrics({ processMetrics: false });
  const controller = new Controller(h.deps(), { concurrency: 1, workers: 1, metrics });

  // WHEN a pass starts the first one
  await controller.runPass();

  // THEN it holds the slot while its stack rolls, and the second waits for it
  expect(h.cfn.peek(h.stackName('a-first'))?.status).toBe('CREATE_IN_PROGRESS');
  expect(controller.slots.inProgress()).toEqual(new Set(['a-first']));
  expect(await gauge(metrics, 'worker_stacks_slots_held')).toBe(1);
  expect(h.condition('Progressing', 'b-second')?.reason).toBe('WaitingForSlot');
  expect(h.cfn.peek(h.stackName('b-second'))).toBeUndefined();
});

test('a restarted daemon keeps the slot of our create under way for an object edited to invalid, even when the stack read shows the change set not started yet', async () => {
  // GIVEN our create executed by a first process, CloudFormation still showing the stack REVIEW_IN_PROGRESS (as it may
  // for a while after ExecuteChangeSet answers), and the object then edited to one that does not validate
  h = new Harness({ clusters: ['a-first', 'b-second'] });
  h.cfn.startDelayMs = 60_000;
  await new Controller(h.deps(), { concurrency: 1, workers: 1 }).runPass();
  expect(h.status('a-first').controller?.executing).toBeDefined();
  expect(h.cfn.peek(h.stackName('a-first'))?.status).toBe('REVIEW_IN_PROGRESS');
  h.edit('a-first', (raw) => {
    raw.spec.pool.minSize = 99;
  });

  // WHEN a new process (a restart: no slot held) makes its first pass
  const restarted = new Controller(h.deps(), { concurrency: 1, workers: 1 });
  await restarted.runPass();

  // THEN the invalid cluster keeps the one slot while its change set executes, and the other waits for it
  expect(h.condition('Stalled', 'a-first')?.reason).toBe('InvalidSpec');
  expect(restarted.slots.inProgress()).toEqual(new Set(['a-first']));
  expect(h.condition('Progressing', 'b-second')?.reason).toBe('WaitingForSlot');
});
