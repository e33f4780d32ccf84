import { runCli } from '../../../lib/adapters/cli/program';
import { Io } from '../../../lib/adapters/cli/context';
import { EXAMPLES_DIR, tempDir } from '../../helpers/clusters';

/**
 * `worker-stacks status` warns, as `validate` does, when an account/region's stacks reach 80 % of CloudFormation's
 * stack quota: each cluster's shared stack, its pools' own stacks, and the bootstrap stack. The examples: apps-eu1
 * (444444444444/eu-central-1) has a shared stack and two pool stacks, 4 planned with the bootstrap stack; eks-us2
 * (666666666666/us-west-2) a shared stack and one pool stack, 3 planned; every other example is alone in its account and
 * region, 2 planned.
 */

function capture(): { io: Io; out: () => string; err: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t) => out.push(t), err: (t) => err.push(t) }, out: () => out.join(''), err: () => err.join('') };
}

const status = (c: ReturnType<typeof capture>, ...args: string[]) =>
  runCli(['status', '--clusters', EXAMPLES_DIR, '--state-dir', tempDir('status-quota'), ...args], c.io);

test.each([
  // [--stack-limit, the account/regions warned]
  [undefined, []],
  ['6', []],
  [
    '5',
    ['444444444444 region eu-central-1: 4 planned stacks (3 of 1 cluster and their pools, + 1 bootstrap) are 80 %'],
  ],
  [
    '2',
    [
      '111111111111 region eu-west-1: 2 planned stacks (1 of 1 cluster and their pools, + 1 bootstrap) are 100 %',
      '222222222222 region us-east-1: 2 planned stacks (1 of 1 cluster and their pools, + 1 bootstrap) are 100 %',
      '333333333333 region ap-southeast-1: 2 planned stacks (1 of 1 cluster and their pools, + 1 bootstrap) are 100 %',
      '444444444444 region eu-central-1: 4 planned stacks (3 of 1 cluster and their pools, + 1 bootstrap) are 200 %',
      '666666666666 region us-west-2: 3 planned stacks (2 of 1 cluster and their pools, + 1 bootstrap) are 150 %',
    ],
  ],
])('--stack-limit %s: warns for %j on stderr; the table is unchanged (exit 0)', async (limit, warned) => {
  // GIVEN the examples, no status recorded
  const c = capture();
  // WHEN
  const code = await status(c, ...(limit ? ['--stack-limit', limit] : []));
  // THEN
  expect(code).toBe(0);
  expect(c.out()).toMatch(/^ACCOUNT\/REGION/);
  const lines = c.err().split('\n').filter(Boolean);
  expect(lines.map((l) => /^warning: account (.*? are \d+ %)/.exec(l)?.[1])).toEqual(warned);
  for (const l of lines) expect(l).toMatch(/Ask AWS for a higher "Stack count" quota .* or use fewer pools$/);
});

test('-o json carries the warnings beside the rows, only when there are some', async () => {
  // GIVEN / WHEN
  const warned = capture();
  const quiet = capture();
  await status(warned, '-o', 'json', '--stack-limit', '5');
  await status(quiet, '-o', 'json');
  // THEN
  const report = JSON.parse(warned.out()) as { clusters: unknown[]; warnings?: string[] };
  expect(report.warnings).toHaveLength(1);
  expect(report.warnings?.[0]).toMatch(/^account 444444444444 region eu-central-1: 4 planned stacks/);
  expect(JSON.parse(quiet.out())).not.toHaveProperty('warnings');
  expect(warned.err()).toBe('');
});

test.each(['0', '1.5', 'many'])('--stack-limit %s is refused as a usage error, saying the fix', async (limit) => {
  // GIVEN / WHEN
  const c = capture();
  const code = await status(c, '--stack-limit', limit);
  // THEN
  expect(code).toBe(2);
  expect(c.err()).toMatch(/is not a stack count\n {2}fix: pass the account's CloudFormation stack quota/);
  expect(c.out()).toBe('');
});
