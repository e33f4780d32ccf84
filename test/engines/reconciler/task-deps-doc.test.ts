import * as path from 'node:path';
import {
  Ambient,
  ReconcilerPolicy,
  ReconcilerPorts,
  RuntimeOwned,
} from '../../../lib/engines/reconciler/workflow/context';
import { DepKey } from '../../../lib/engines/reconciler/workflow/task-context';
import { allTasks } from '../../../lib/engines/reconciler/compose/workflow';
import { markedBlock, readDoc } from '../../docs/docs';

// docs/design.md's table of what each task of the reconciler reads, made from the tasks' own `deps` lists.

/** Who provides each dependency (context.ts's four interfaces): the compiler checks every key is here, in its own. */
const PROVIDER: { readonly [K in keyof ReconcilerPorts]: 'ports' } & {
  readonly [K in keyof ReconcilerPolicy]: 'policy';
} & { readonly [K in keyof RuntimeOwned]: 'runtime-owned' } & { readonly [K in keyof Ambient]: 'ambient' } = {
  store: 'ports',
  aws: 'ports',
  identity: 'ports',
  synthesizer: 'ports',
  events: 'ports',
  backoff: 'policy',
  pollMs: 'policy',
  changeSetTimeoutMs: 'policy',
  dryRun: 'policy',
  nag: 'policy',
  maxRecoveryAttempts: 'policy',
  maxUpdateAttempts: 'policy',
  drift: 'policy',
  keepConfigObjects: 'policy',
  derived: 'runtime-owned',
  kept: 'runtime-owned',
  slots: 'runtime-owned',
  rollout: 'runtime-owned',
  images: 'runtime-owned',
  templatesDir: 'ambient',
  workDir: 'ambient',
  code: 'ambient',
  release: 'ambient',
  log: 'ambient',
  now: 'ambient',
};
const COLUMNS = ['ports', 'policy', 'runtime-owned', 'ambient'] as const;
const ORDER = Object.keys(PROVIDER) as DepKey[];

/** The table: one row per task, in the workflows' order, its dependencies by who provides them. */
function table(): string {
  const rows = allTasks().map((t) => {
    const deps = new Set<DepKey>(t.deps);
    const cells = COLUMNS.map((c) =>
      ORDER.filter((k) => deps.has(k) && PROVIDER[k] === c)
        .map((k) => `\`${k}\``)
        .join(', '),
    );
    return `| \`${t.name}\` | ${cells.join(' | ')} |`;
  });
  return [`| task | ${COLUMNS.join(' | ')} |`, `| --- | ${COLUMNS.map(() => '---').join(' | ')} |`, ...rows, ''].join(
    '\n',
  );
}

test("docs/design.md's table of what each task reads is the tasks' own deps lists", () => {
  // GIVEN the table in the doc
  const block = markedBlock(readDoc(path.join('docs', 'design.md')), 'task-deps');
  // WHEN it is compared with the one made from the tasks
  const made = table();
  // THEN they are the same (the message gives the block to paste when a task's deps change)
  if (block !== made) throw new Error(`docs/design.md's task-deps block is stale; replace it with:\n${made}`);
  expect(block).toBe(made);
});

test("the dependencies no task reads are the runner's and the runtime's alone (the AWS clients, the log)", () => {
  // GIVEN every task's declared dependencies
  const read = new Set(allTasks().flatMap((t) => t.deps));
  // THEN what no task reads is what the runner and the runtime read around the tasks (the clients, the log)
  expect(ORDER.filter((k) => !read.has(k))).toEqual(['aws', 'log']);
});
