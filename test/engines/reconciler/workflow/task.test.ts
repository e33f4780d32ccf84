import { ReconcileContext, TASK } from '../../../../lib/engines/reconciler/workflow/context';
import { Outcome } from '../../../../lib/engines/reconciler/workflow/outcomes';
import { Found, Observed, Start } from '../../../../lib/engines/reconciler/workflow/state';
import { after, before, Progress, runWorkflow, Task, Workflow } from '../../../../lib/engines/reconciler/workflow/task';
import { changeSet, execute, publish, synthesize } from '../../../../lib/engines/reconciler/tasks/apply';
import { rollKey } from '../../../../lib/engines/reconciler/tasks/roll-key';
import { APPLY, allTasks, PREPARE, RECORD, RESUME, SETTLED } from '../../../../lib/engines/reconciler/compose/workflow';

/**
 * Tasks read an immutable context and the typed value the tasks before them returned; each adds its own value or
 * ends the reconcile. The order is set in one place (workflow.ts) and checked by the compiler.
 */

const log = { info: () => undefined, warn: () => undefined, error: () => undefined, child: () => log };
// The tasks here never read their context: an instance with no fields set is enough.
const ctx = Object.create(ReconcileContext.prototype) as ReconcileContext;
const start = (): Start => Object.freeze({ log });
const progress = (): Progress => ({ task: 'start', found: start() });

const adds = <O extends object>(name: Task<Found>['name'], value: O, seen?: Found[]): Task<Found, O> => ({
  name,
  deps: [],
  run: async (_ctx, s) => {
    seen?.push(s);
    return value;
  },
});
const ends = (name: Task<Found>['name'], outcome: Outcome): Task<Found> => ({
  name,
  deps: [],
  run: async () => outcome,
});

test('each task gets a new frozen value: what the tasks before it returned, and never a field assigned', async () => {
  // GIVEN two tasks that each add a value
  const seen: Found[] = [];
  const w = Workflow.from<Found>()
    .then(adds(TASK.validate, { configChange: 'a' }, seen))
    .then(adds(TASK.render, { fingerprint: 'f' }, seen))
    .then(adds(TASK.observe, {}, seen));
  const input = start();

  // WHEN it runs
  const r = await runWorkflow(w, ctx, input, [], progress());

  // THEN each task saw what the ones before it added, as a frozen value; the input itself is untouched
  expect(seen.map((s) => [s.configChange, s.fingerprint])).toEqual([
    [undefined, undefined],
    ['a', undefined],
    ['a', 'f'],
  ]);
  expect(seen.every((s) => Object.isFrozen(s))).toBe(true);
  expect(() => {
    (seen[1] as { fingerprint?: string }).fingerprint = 'x';
  }).toThrow(TypeError);
  expect(input).toEqual({ log });
  expect(r).toEqual({ found: { log, configChange: 'a', fingerprint: 'f' } });
});

test('an Outcome ends the workflow; a task whose `when` is false is skipped', async () => {
  // GIVEN a skipped task, a task that ends the reconcile, and one after it
  const ran: string[] = [];
  const track = (name: Task<Found>['name'], r?: Outcome): Task<Found> => ({
    name,
    deps: [],
    run: async () => {
      ran.push(name);
      return r;
    },
  });
  const w = Workflow.from<Found>()
    .then({ ...track(TASK.paused), when: () => false })
    .then(track(TASK.dryRun, { result: 'dry-run', message: 'would' }))
    .then(track(TASK.execute));

  // WHEN it runs
  const r = await runWorkflow(w, ctx, start(), [], progress());

  // THEN the reconcile ended with that outcome, and neither the skipped nor the later task ran
  expect(r).toEqual({ outcome: { result: 'dry-run', message: 'would' } });
  expect(ran).toEqual([TASK.dryRun]);
});

test('hooks bind to a named task and see what was found before and after it; the error path knows the failing task', async () => {
  // GIVEN hooks on one task, and a workflow whose last task throws
  const calls: string[] = [];
  const hooks = [
    before(TASK.render, (_c, t, f) => void calls.push(`before ${t} ${f.fingerprint}`)),
    after(TASK.render, (_c, t, f) => void calls.push(`after ${t} ${f.fingerprint}`)),
  ];
  const boom: Task<Found> = { name: TASK.observe, deps: [], run: async () => Promise.reject(new Error('boom')) };
  const w = Workflow.from<Found>()
    .then(adds(TASK.validate, {}))
    .then(adds(TASK.render, { fingerprint: 'f' }))
    .then(boom);
  const p = progress();

  // WHEN it runs
  await expect(runWorkflow(w, ctx, start(), hooks, p)).rejects.toThrow('boom');

  // THEN only the render hooks ran, around it; the progress names the failing task and what was found so far
  expect(calls).toEqual(['before render undefined', 'after render f']);
  expect(p.task).toBe(TASK.observe);
  expect(p.found.fingerprint).toBe('f');
});

test('a task that ends the reconcile adds nothing to what was found', async () => {
  // GIVEN a task that returns an outcome after one that added a value
  const w = Workflow.from<Found>()
    .then(adds(TASK.render, { fingerprint: 'f' }))
    .then(ends(TASK.observe, { result: 'invalid' }));
  const p = progress();

  // WHEN it runs
  await runWorkflow(w, ctx, start(), [], p);

  // THEN the outcome is no part of the found value
  expect(p.found).toEqual({ log, fingerprint: 'f' });
});

test('the workflows: every task once, in the documented order, each a named task', () => {
  // THEN
  expect(PREPARE.tasks.map((t) => t.name)).toEqual([
    'finalize',
    'skip-if-same-inputs',
    'validate',
    'render',
    'observe',
    'claim',
  ]);
  expect(RESUME.tasks.map((t) => t.name)).toEqual(['wait']);
  expect(RECORD.tasks.map((t) => t.name)).toEqual(['record-execution', ...APPLY.tasks.map((t) => t.name)]);
  expect(APPLY.tasks.map((t) => t.name).slice(-4)).toEqual(['synthesize', 'publish', 'change-set', 'execute']);
  expect(SETTLED.tasks.map((t) => t.name)).toEqual(['clean-config-objects']);
  expect(new Set(allTasks().map((t) => t.name)).size).toBe(allTasks().length);
});

test('the compiler refuses a workflow that runs a task before what it needs', () => {
  // GIVEN/WHEN/THEN: each line below must fail to compile (`npm test` runs tsc first); a line that compiles is an error there
  // @ts-expect-error publish needs what synthesize returns
  Workflow.from<Observed>().then(publish);
  // @ts-expect-error synthesize needs what roll-key returns
  Workflow.from<Observed>().then(synthesize);
  // @ts-expect-error execute needs the change set
  Workflow.from<Observed>().then(rollKey).then(synthesize).then(execute);
  // The right order compiles.
  expect(
    Workflow.from<Observed>().then(rollKey).then(synthesize).then(publish).then(changeSet).then(execute).tasks,
  ).toHaveLength(5);
});
