import { AssumeRoleError } from '../../../lib/core/errors';
import { fail } from '../../fakes/fake-cloudformation';
import { EXAMPLE, Harness, LAUNCH_TEMPLATE_FAILURE } from '../../fakes/harness';
import { Json } from '../../helpers/json';

/** What the status and the log say matches the latest observation, and a fix it names works (issue 25, items 5, 11, 13). */

let h: Harness;
afterEach(() => h.cleanup());

const image = (id: string) => (raw: Json) => {
  raw.spec.pool.machineImage = id;
};
const maxPods = (n: number) => (raw: Json) => {
  raw.spec.cloudConfig.values.maxPods = n;
};
/** The live template with its ConfigChecksum output replaced, as a console edit of the stack would leave it. */
function withChecksum(template: string, checksum: string): string {
  const t = JSON.parse(template);
  t.Outputs.ConfigChecksum.Value = checksum;
  return JSON.stringify(t);
}

async function applied(): Promise<void> {
  h = new Harness();
  expect((await h.reconcile()).result).toBe('applied');
}

test('after an image change fails for good, Ready and Degraded say so, not "executing" or "nothing wrong so far"', async () => {
  // GIVEN a live cluster whose image change (same node config) rolls back every time
  await applied();
  h.cfn.setDefault(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE));
  h.edit(EXAMPLE, image('ami-0123456789abcdef0'));

  // WHEN it is reconciled until it stops
  const outcome = await h.reconcile(EXAMPLE, {}, h.deps({ maxUpdateAttempts: 1 }));

  // THEN every condition says the failure, and none the stack status seen while it ran
  expect(outcome.result).toBe('stalled');
  expect(h.condition('Stalled')).toMatchObject({ status: 'True', reason: 'UpdateFailed' });
  expect(h.condition('Ready')).toMatchObject({ status: 'False', reason: 'UpdateFailed' });
  expect(h.condition('Degraded')?.message).not.toMatch(/nothing wrong/);
  for (const c of h.status().conditions)
    expect([c.type, c.reason, c.message]).not.toEqual([
      c.type,
      'ChangeSetExecuting',
      expect.stringMatching(/IN_PROGRESS/),
    ]);
  expect(JSON.stringify(h.status().conditions)).not.toMatch(/ChangeSetExecuting|UPDATE_IN_PROGRESS/);
});

test('a vanished stack is re-created under the reason StackDeleted, and a repaired drift never says "first config"', async () => {
  // GIVEN a live cluster whose stack is deleted out of band
  await applied();
  h.cfn.deleteOutOfBand(h.stackName());

  // WHEN one reconcile runs
  await h.step();

  // THEN
  expect(h.condition('Progressing')).toMatchObject({ status: 'True', reason: 'StackDeleted' });
  expect(h.condition('Progressing')?.message).not.toMatch(/first config/);

  // GIVEN it converged, then its stack changed out of band
  await h.reconcile();
  h.cfn.changeOutOfBand(h.stackName(), withChecksum(h.cfn.requests.at(-1)!.templateBody!, 'e'.repeat(64)));

  // WHEN one reconcile runs
  await h.step();

  // THEN the repair says what it restores
  expect(h.condition('Progressing')).toMatchObject({ status: 'True', reason: 'Drifted' });
  expect(h.condition('Progressing')?.message).not.toMatch(/first config/);
  expect(h.status().lastConfigChange).not.toBe('first config');
  expect(h.status().lastConfigChange).toMatch(/restoring/);
});

test('a paused cluster with a pending change is not Ready', async () => {
  // GIVEN a live, Ready cluster, paused with a config change
  await applied();
  h.edit(EXAMPLE, (raw) => {
    maxPods(100)(raw);
    raw.spec.paused = true;
  });

  // WHEN it is reconciled
  expect((await h.reconcile()).result).toBe('paused');

  // THEN
  expect(h.condition('Ready')).toMatchObject({ status: 'False', reason: 'Paused' });
  expect(h.condition('Progressing')).toMatchObject({ status: 'False', reason: 'Paused' });
});

test('a paused cluster with nothing pending stays Ready', async () => {
  // GIVEN a live, Ready cluster, paused with no other change
  await applied();
  h.edit(EXAMPLE, (raw) => (raw.spec.paused = true));

  // WHEN it is reconciled
  await h.reconcile();

  // THEN
  expect(h.condition('Ready')?.status).toBe('True');
});

test('retry grants one more attempt, not a whole new budget', async () => {
  // GIVEN a config change that rolls back every time, stopped after --max-update-attempts 2
  await applied();
  h.cfn.setDefault(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE));
  h.edit(EXAMPLE, maxPods(100));
  const deps = () => h.deps({ maxUpdateAttempts: 2, backoff: { baseMs: 1000, maxMs: 1000, random: () => 0.5 } });
  for (let i = 0; i < 5 && (await h.reconcile(EXAMPLE, {}, deps())).result !== 'stalled'; i++) h.cfn.advance(1000);
  const updates = () => h.cfn.started.filter((s) => s.kind === 'update').length;
  expect(updates()).toBe(2);

  // WHEN an operator asks for a retry, and the reconciler runs until it stops again
  await h.deps().store.requestRetry(EXAMPLE, new Date(h.clock.ms).toISOString());
  for (let i = 0; i < 5 && (await h.reconcile(EXAMPLE, {}, deps())).result !== 'stalled'; i++) h.cfn.advance(1000);

  // THEN it tried once more, then stopped
  expect(updates()).toBe(3);
  expect(h.condition('Stalled')).toMatchObject({ status: 'True', reason: 'UpdateFailed' });
});

test('an unusable deployer role names a fix that works even when the role was deleted', async () => {
  // GIVEN an account whose deployer role cannot be assumed (deleted behind CloudFormation's back)
  await applied();
  h.edit(EXAMPLE, maxPods(100));
  const arn = 'arn:aws:iam::222222222222:role/worker-stacks-deployer-us-east-1';
  const deps = h.deps({
    identity: {
      account: async () => {
        throw new AssumeRoleError(
          '222222222222',
          'us-east-1',
          arn,
          Object.assign(new Error(`User is not authorized to perform: sts:AssumeRole on resource: ${arn}`), {
            name: 'AccessDenied',
          }),
        );
      },
    },
  });

  // WHEN it is reconciled
  expect((await h.reconcile(EXAMPLE, {}, deps)).result).toBe('stalled');

  // THEN the fix is the bootstrap command, exactly, which restores a deleted role (test/integration/bootstrap-restore-moto.test.ts
  // proves it on moto); no detour through another --role-name
  expect(h.condition('Stalled')).toMatchObject({ status: 'True', reason: 'AssumeRoleFailed' });
  const message = h.condition('Stalled')?.message ?? '';
  expect(message).toContain(
    "fix: with credentials of account 222222222222, run worker-stacks bootstrap --account 222222222222 --region us-east-1 --trust <this daemon's role ARN> (it makes the role, restores it if it was deleted, and sets its trust)",
  );
  expect(message).not.toContain('--role-name');
});

test("the fix names the daemon's own --role-name and that it passes an --external-id", async () => {
  // GIVEN a daemon with --role-name ops-deployer and an external id, whose deployer role cannot be assumed
  await applied();
  h.edit(EXAMPLE, maxPods(100));
  const arn = 'arn:aws:iam::222222222222:role/ops-deployer-us-east-1';
  const refused = Object.assign(new Error('not authorized to perform: sts:AssumeRole'), { name: 'AccessDenied' });
  const deps = h.deps({
    identity: {
      account: async () => {
        throw new AssumeRoleError('222222222222', 'us-east-1', arn, refused, {
          roleName: 'ops-deployer',
          externalId: true,
        });
      },
    },
  });

  // WHEN it is reconciled
  expect((await h.reconcile(EXAMPLE, {}, deps)).result).toBe('stalled');

  // THEN the command is the one to run, flags and all
  expect(h.condition('Stalled')?.message).toContain(
    "run worker-stacks bootstrap --account 222222222222 --region us-east-1 --trust <this daemon's role ARN> --role-name ops-deployer --external-id <the daemon's --external-id> (it makes",
  );
});

test('an AccessDenied from the account (an execution role deleted, say) names the bootstrap command that restores it', async () => {
  // GIVEN an account that refuses the daemon's calls
  await applied();
  h.edit(EXAMPLE, maxPods(100));
  const deps = h.deps({
    identity: {
      account: async () => {
        throw Object.assign(new Error('User is not authorized to perform: iam:PassRole'), {
          name: 'AccessDenied',
          $metadata: { httpStatusCode: 403 },
        });
      },
    },
  });

  // WHEN it is reconciled
  expect((await h.reconcile(EXAMPLE, {}, deps)).result).toBe('stalled');

  // THEN
  expect(h.condition('Stalled')).toMatchObject({ status: 'True', reason: 'AccessDenied' });
  expect(h.condition('Stalled')?.message).toContain(
    "fix: with credentials of account 222222222222, run worker-stacks bootstrap --account 222222222222 --region us-east-1 --trust <this daemon's role ARN> (it makes the deployer and execution roles, and restores either if it was deleted)",
  );
});

test('no log line repeats a key its logger already binds (one JSON key, one value)', async () => {
  // GIVEN a cluster applied, drifted and repaired: every kind of line of a roll
  await applied();
  h.cfn.changeOutOfBand(h.stackName(), withChecksum(h.cfn.requests.at(-1)!.templateBody!, 'e'.repeat(64)));
  await h.reconcile();
  h.edit(EXAMPLE, maxPods(100));
  await h.reconcile();

  // THEN
  const repeated = h.log.entries.flatMap((e) =>
    Object.keys(e.obj)
      .filter((k) => k in e.bindings)
      .map((k) => `${e.msg}: ${k}`),
  );
  expect(repeated).toEqual([]);
});
