import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { runCli } from '../../../lib/adapters/cli/program';
import { validateCommand } from '../../../lib/adapters/cli/validate';
import { Io } from '../../../lib/adapters/cli/context';
import { EXAMPLES_DIR, tempDir } from '../../helpers/clusters';
import { rawPoolsExample } from '../../helpers/named-pools';
import { FakeClock } from '../../fakes/fake-ports';
import { FakeCloudFormation } from '../../fakes/fake-cloudformation';
import { DEFAULT_TEMPLATES_DIR } from '../../../lib/platform/files/template-directory';

/**
 * `worker-stacks validate` warns (exit 0) when an account/region's planned stacks reach 80 % of CloudFormation's stack
 * quota: offline against --stack-limit (or AWS's 2000), or against each region's DescribeAccountLimits when asked.
 */

function capture(): { io: Io; out: () => string; err: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t) => out.push(t), err: (t) => err.push(t) }, out: () => out.join(''), err: () => err.join('') };
}

let dir: string;
const nag = process.env.WORKER_STACKS_NAG;
beforeEach(() => {
  // GIVEN prod-eu1 as three named pools: 4 stacks (the shared one and one per pool) + 1 bootstrap = 5 planned
  dir = tempDir('quota');
  fs.writeFileSync(path.join(dir, 'prod-eu1.yaml'), stringify(rawPoolsExample()));
  // cdk-nag is not what these tests are about; the quota is
  process.env.WORKER_STACKS_NAG = 'false';
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  if (nag === undefined) delete process.env.WORKER_STACKS_NAG;
  else process.env.WORKER_STACKS_NAG = nag;
});

const WARNING =
  /^warning: account 111111111111 region eu-west-1: 5 planned stacks \(4 of 1 cluster and their pools, \+ 1 bootstrap\) are (\d+) % of CloudFormation's limit of (\d+) stacks per account and region \(([^)]+)\)(: the stacks beyond it cannot be created)?; the account's other stacks count too\. Ask AWS for a higher "Stack count" quota .* or use fewer pools$/;

test.each([
  // [--stack-limit, warning: [percent, limit, source, over] or none]
  [undefined, undefined],
  ['7', undefined],
  ['6', ['83', '6', '--stack-limit', undefined]],
  ['5', ['100', '5', '--stack-limit', undefined]],
  ['4', ['125', '4', '--stack-limit', ': the stacks beyond it cannot be created']],
])('--stack-limit %s: warned %j, and still valid (exit 0)', async (limit, warning) => {
  // WHEN
  const c = capture();
  const code = await runCli(['validate', '--clusters', dir, ...(limit ? ['--stack-limit', limit] : [])], c.io);
  // THEN
  expect(code).toBe(0);
  expect(c.out()).toBe('1 cluster object valid\n');
  const lines = c.err().split('\n').filter(Boolean);
  if (!warning) {
    expect(lines).toEqual([]);
    return;
  }
  expect(lines).toHaveLength(1);
  expect(WARNING.exec(lines[0])?.slice(1)).toEqual(warning);
});

test('-o json carries the warning beside the valid files', async () => {
  // WHEN
  const c = capture();
  const code = await runCli(['validate', '--clusters', dir, '-o', 'json', '--stack-limit', '5'], c.io);
  // THEN
  expect(code).toBe(0);
  const report = JSON.parse(c.out());
  expect(report.problems).toEqual([]);
  expect(report.warnings).toEqual([expect.stringContaining('5 planned stacks')]);
  expect(c.err()).toBe('');
});

test.each(['0', '-1', 'many', '2.5'])('--stack-limit %s is a usage error (exit 2)', async (limit) => {
  // WHEN
  const c = capture();
  const code = await runCli(['validate', '--clusters', EXAMPLES_DIR, '--stack-limit', limit], c.io);
  // THEN
  expect(code).toBe(2);
  expect(c.err()).toContain(`--stack-limit "${limit}" is not a stack count`);
  expect(c.out()).toBe('');
});

test.each([
  // [the region's StackLimit, warned with it]
  [2000, false],
  [6, true],
])(
  '--live-stack-limit: a StackLimit of %d read from CloudFormation is the limit (warned: %s)',
  async (stackLimit, warned) => {
    // GIVEN CloudFormation of the region, as the fake says it
    const cfn = new FakeCloudFormation({ clock: new FakeClock(), stackLimit });
    const asked: string[] = [];
    const c = capture();
    // WHEN
    const code = await validateCommand({ clustersDir: dir, templatesDir: DEFAULT_TEMPLATES_DIR }, c.io, {
      stackLimit: '5',
      liveStackLimit: true,
      readStackLimit: (region) => {
        asked.push(region);
        return cfn.stackLimit();
      },
    });
    // THEN the live limit replaces the flag's
    expect(code).toBe(0);
    expect(asked).toEqual(['eu-west-1']);
    expect(c.err()).toEqual(
      warned
        ? expect.stringContaining(`limit of ${stackLimit} stacks per account and region (DescribeAccountLimits)`)
        : '',
    );
  },
);

test('--live-stack-limit that cannot read a region says so and counts against the flag', async () => {
  // WHEN
  const c = capture();
  const code = await validateCommand({ clustersDir: dir, templatesDir: DEFAULT_TEMPLATES_DIR }, c.io, {
    stackLimit: '5',
    liveStackLimit: true,
    readStackLimit: () => Promise.reject(new Error('no credentials')),
  });
  // THEN
  expect(code).toBe(0);
  const lines = c.err().split('\n').filter(Boolean);
  expect(lines[0]).toBe(
    'warning: region eu-west-1: could not read the stack limit (no credentials); counted against 5',
  );
  expect(lines[1]).toMatch(/limit of 5 stacks per account and region \(--stack-limit\)/);
});
