import * as fs from 'node:fs';
import { STACK_FINALIZER } from '../../../lib/platform/kube/resource';
import { ClusterRecord, ClusterStore } from '../../../lib/model/ports/cluster-store';
import { ClusterStatus } from '../../../lib/model/cluster/schema/status';
import { complete, fail } from '../../fakes/fake-cloudformation';
import { EXAMPLE, Harness } from '../../fakes/harness';

/**
 * spec.deletionPolicy through the workflow's finalize task, on the fake CloudFormation, with a store that holds
 * deletions as the Kubernetes API server does (a deleted object with finalizers stays, marked, until they are gone).
 * The real API server's side of it is in test/integration/kubernetes-deletion.test.ts.
 */
class HoldingStore implements ClusterStore {
  public readonly finalizers = new Map<string, string[]>();
  public readonly deleting = new Set<string>();
  constructor(
    private readonly inner: ClusterStore,
    private readonly onGone: (name: string) => void,
  ) {}
  private decorate = (r: ClusterRecord | undefined): ClusterRecord | undefined =>
    r && {
      ...r,
      finalizers: this.finalizers.get(r.name),
      ...(this.deleting.has(r.name) ? { deletionRequested: true } : {}),
    };
  list = async () => (await this.inner.list()).map((r) => this.decorate(r)!);
  get = async (n: string) => this.decorate(await this.inner.get(n));
  writeStatus = (n: string, s: ClusterStatus, v: string) => this.inner.writeStatus(n, s, v);
  clearStatus = (n: string, v: string) => this.inner.clearStatus(n, v);
  requestRetry = (n: string, t: string) => this.inner.requestRetry(n, t);
  setPaused = (n: string, p: boolean) => this.inner.setPaused(n, p);
  watch = (f: (n: string) => void) => this.inner.watch(f);
  async setFinalizer(name: string, finalizer: string, present: boolean) {
    const cur = this.finalizers.get(name) ?? [];
    this.finalizers.set(name, present ? [...new Set([...cur, finalizer])] : cur.filter((f) => f !== finalizer));
    // The API server removes a deleted object once its last finalizer is gone.
    if (this.deleting.has(name) && this.finalizers.get(name)!.length === 0) this.onGone(name);
  }
  /** `kubectl delete`: gone at once without finalizers, held (marked) with them. */
  delete(name: string) {
    if ((this.finalizers.get(name) ?? []).length === 0) this.onGone(name);
    else this.deleting.add(name);
  }
}

let h: Harness;
let store: HoldingStore;
const deps = () => h.deps({ store });
beforeEach(() => {
  h = new Harness();
  store = new HoldingStore(h.deps().store, (name) => fs.rmSync(h.objectFile(name)));
});
afterEach(() => h.cleanup());

test('Delete: the finalizer is added before the first stack operation, and the stack is created as usual', async () => {
  // GIVEN an object with deletionPolicy Delete
  h.edit(EXAMPLE, (raw) => (raw.spec.deletionPolicy = 'Delete'));

  // WHEN it is reconciled
  const outcome = await h.reconcile(EXAMPLE, {}, deps());

  // THEN it holds the finalizer and its stack exists
  expect(outcome.result).toBe('applied');
  expect(store.finalizers.get(EXAMPLE)).toEqual([STACK_FINALIZER]);
  expect(h.cfn.peek(h.stackName())).toMatchObject({ status: 'CREATE_COMPLETE' });
});

test('Retain (the default): no finalizer, and one left from an earlier Delete is removed', async () => {
  // GIVEN an object without deletionPolicy that still carries our finalizer
  await store.setFinalizer(EXAMPLE, STACK_FINALIZER, true);

  // WHEN it is reconciled
  await h.reconcile(EXAMPLE, {}, deps());

  // THEN the finalizer is gone
  expect(store.finalizers.get(EXAMPLE)).toEqual([]);
});

test('Delete, object deleted: the stack is deleted and waited on without a waiter, then the finalizer goes and with it the object', async () => {
  // GIVEN a created cluster with deletionPolicy Delete, whose stack deletion takes two polls
  h.edit(EXAMPLE, (raw) => (raw.spec.deletionPolicy = 'Delete'));
  await h.reconcile(EXAMPLE, {}, deps());
  h.cfn.script(h.stackName(), complete(2));

  // WHEN the object is deleted and reconciled
  store.delete(EXAMPLE);
  const first = await h.step(EXAMPLE, {}, deps());

  // THEN the first reconcile starts the delete and requeues, saying so in the status (the object is still there)
  expect(first).toMatchObject({ result: 'waiting', requeueAfterMs: expect.any(Number) });
  expect(h.cfn.count('deleteStack')).toBe(1);
  expect(h.condition('Progressing')).toMatchObject({ status: 'True', reason: 'DeletingStack' });
  expect(fs.existsSync(h.objectFile(EXAMPLE))).toBe(true);

  // WHEN reconciled until it settles
  const last = await h.reconcile(EXAMPLE, {}, deps());

  // THEN the stack is gone, the finalizer removed, and the object with it; no second delete was sent
  expect(last.result).toBe('deleted');
  expect(h.cfn.peek(h.stackName())).toBeUndefined();
  expect(fs.existsSync(h.objectFile(EXAMPLE))).toBe(false);
  expect(h.cfn.count('deleteStack')).toBe(1);
});

test('Delete, the stack delete fails: the finalizer stays, Stalled=DeleteFailed names the resource; retry deletes again', async () => {
  // GIVEN a created cluster with deletionPolicy Delete whose stack deletion fails on the security group
  h.edit(EXAMPLE, (raw) => (raw.spec.deletionPolicy = 'Delete'));
  await h.reconcile(EXAMPLE, {}, deps());
  h.cfn.script(
    h.stackName(),
    fail({
      logicalId: 'WorkerSecurityGroup',
      resourceType: 'AWS::EC2::SecurityGroup',
      reason: 'resource sg-123 has a dependent object',
    }),
  );

  // WHEN the object is deleted and reconciled until it settles
  store.delete(EXAMPLE);
  const outcome = await h.reconcile(EXAMPLE, {}, deps());

  // THEN it stalls with the failing resource, holds the object, and sends no further delete
  expect(outcome.result).toBe('stalled');
  expect(h.problem()).toMatchObject({
    type: 'Stalled',
    status: 'True',
    reason: 'DeleteFailed',
    message: expect.stringContaining('WorkerSecurityGroup'),
  });
  expect(h.problem()!.message).toContain('has a dependent object');
  expect(store.finalizers.get(EXAMPLE)).toEqual([STACK_FINALIZER]);
  expect(fs.existsSync(h.objectFile(EXAMPLE))).toBe(true);
  expect((await h.reconcile(EXAMPLE, {}, deps())).result).toBe('stalled');
  expect(h.cfn.count('deleteStack')).toBe(1);

  // WHEN the operator fixed the cause and asks for a retry
  h.cfn.script(h.stackName(), complete());
  await store.requestRetry(EXAMPLE, 'retry-1');
  const retried = await h.reconcile(EXAMPLE, {}, deps());

  // THEN the delete is sent again, the stack goes, and so does the object
  expect(retried.result).toBe('deleted');
  expect(h.cfn.count('deleteStack')).toBe(2);
  expect(fs.existsSync(h.objectFile(EXAMPLE))).toBe(false);
});

test('Retain, object deleted while holding only another finalizer: no AWS write, nothing removed', async () => {
  // GIVEN a created cluster (Retain) that another controller holds with its own finalizer
  await h.reconcile(EXAMPLE, {}, deps());
  await store.setFinalizer(EXAMPLE, 'example.com/other', true);
  h.cfn.resetCalls();

  // WHEN it is deleted and reconciled
  store.delete(EXAMPLE);
  const outcome = await h.reconcile(EXAMPLE, {}, deps());

  // THEN the stack stays untouched and the other finalizer is left alone
  expect(outcome.result).toBe('unchanged');
  expect(h.cfn.count('deleteStack', 'createChangeSet', 'executeChangeSet')).toBe(0);
  expect(h.cfn.peek(h.stackName())).toMatchObject({ status: 'CREATE_COMPLETE' });
  expect(store.finalizers.get(EXAMPLE)).toEqual(['example.com/other']);
});

test.each([
  [
    'Delete, the stack deleted',
    'Delete',
    true,
    /^object deleted; its stack WorkerStack-staging-us1 is deleted \(spec.deletionPolicy Delete\)$/,
  ],
  [
    'Delete, the finalizer removed by hand (the stack kept)',
    'Delete',
    false,
    /^object deleted without the finalizer worker-stacks.io\/stack: its stack WorkerStack-staging-us1 is left as it is \(CREATE_COMPLETE\)$/,
  ],
  ['Retain', 'Retain', false, /^object deleted; its stack is retained \(spec.deletionPolicy Retain\)$/],
] as const)(
  'the last look at a deleted object without the finalizer says what became of its stack: %s',
  async (_what, policy, stackGone, message) => {
    // GIVEN a created cluster, its stack deleted or not, and the object seen deleted without our finalizer
    h.edit(EXAMPLE, (raw) => (raw.spec.deletionPolicy = policy));
    await h.reconcile(EXAMPLE, {}, deps());
    if (stackGone) {
      await h.cfn.deleteStack(h.stackName(), 'by-the-finalize');
      h.cfn.advance(60_000);
    }
    store.deleting.add(EXAMPLE);
    store.finalizers.set(EXAMPLE, []);

    // WHEN it is reconciled
    const outcome = await h.step(EXAMPLE, {}, deps());

    // THEN nothing is done, and the message says what is true of the stack
    expect(outcome.result).toBe('unchanged');
    expect(outcome.message).toMatch(message);
  },
);
