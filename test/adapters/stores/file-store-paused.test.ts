import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { runCli } from '../../../lib/adapters/cli/program';
import { withPaused } from '../../../lib/adapters/stores/file-store-paused';
import { EXAMPLES_DIR, tempDir } from '../../helpers/clusters';

/**
 * `pause` and `resume` change only the `paused` line of the user's file: comments, indentation, flow sequences and
 * quoting stay byte for byte (a GitOps repository shows a one-line diff). Pause then resume gives back the very bytes
 * of a file that had no `paused` field.
 */

/** An object written the way people write YAML, not the way a serializer would. */
const HAND_WRITTEN = [
  '# prod-eu1: the big one   (owner: platform)',
  'apiVersion: worker-stacks.io/v1alpha1',
  'kind:   WorkerCluster',
  'metadata: { name: prod-eu1 }',
  '',
  'spec:    # what we run',
  '      # the account comes first',
  '      account: "111111111111"',
  "      region: 'eu-west-1'",
  '      network:',
  '          vpcId: vpc-0123',
  '          subnetIds: [subnet-a,   subnet-b]     # two AZs',
  '          availabilityZones:',
  '          - eu-west-1a',
  '          - eu-west-1b',
  '      tags: {team: platform,  "cost-center": "4711"}',
  '      description: >-',
  '          folded text',
  '          over two lines',
  '',
  '# tail comment',
  '',
].join('\n');

/** Lines of `b` that are not in `a`, and of `a` not in `b`, by position: what `diff` would show. */
function changedLines(a: string, b: string): { removed: string[]; added: string[] } {
  const x = a.split('\n');
  const y = b.split('\n');
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  return { removed: x.slice(head, x.length - tail), added: y.slice(head, y.length - tail) };
}

describe('withPaused on a hand-written file', () => {
  test.each([
    {
      layout: 'block mapping, odd indentation, comments, flow sequences, quotes',
      text: HAND_WRITTEN,
      added: '      paused: true',
    },
    { layout: 'Windows line endings', text: HAND_WRITTEN.replace(/\n/g, '\r\n'), added: '      paused: true\r' },
    {
      layout: 'spec as a flow mapping',
      text: 'kind: WorkerCluster\nspec: { account: "1",  region: x }  # flow\n',
      added: 'spec: { paused: true, account: "1",  region: x }  # flow',
    },
  ])('$layout: pause adds one line, resume gives back the same bytes', ({ text, added }) => {
    // WHEN paused
    const paused = withPaused(text, true);

    // THEN the only difference is the paused field, and the object is the same plus paused
    const diff = changedLines(text, paused);
    expect(diff.added).toEqual([added]);
    expect(diff.removed.length).toBeLessThanOrEqual(1);
    expect(parse(paused)).toEqual({ ...parse(text), spec: { ...parse(text).spec, paused: true } });

    // WHEN resumed THEN the file is byte for byte what it was
    expect(withPaused(paused, false)).toBe(text);
  });

  test.each([
    { before: '      paused: false   # set by hand', after: '      paused: true   # set by hand' },
    { before: '      paused: "no"', after: '      paused: true' },
  ])('an existing `$before` is changed in place', ({ before, after }) => {
    // GIVEN a file with the field already there
    const text = HAND_WRITTEN.replace("      region: 'eu-west-1'\n", `      region: 'eu-west-1'\n${before}\n`);

    // WHEN paused THEN only that line changes; WHEN resumed THEN only that line goes
    expect(changedLines(text, withPaused(text, true))).toEqual({ removed: [before], added: [after] });
    expect(changedLines(text, withPaused(text, false))).toEqual({ removed: [before], added: [] });
  });

  test.each([
    { state: 'paused twice', text: withPaused(HAND_WRITTEN, true), paused: true },
    { state: 'resumed when not paused', text: HAND_WRITTEN, paused: false },
  ])('$state: nothing changes', ({ text, paused }) => {
    expect(withPaused(text, paused)).toBe(text);
  });

  test('a file that is not valid YAML is refused with its name and the fix', () => {
    expect(() => withPaused('spec: [unclosed\n', true, 'clusters/x.yaml')).toThrow(
      /clusters\/x\.yaml is not valid YAML[\s\S]*fix: fix the file/,
    );
  });
});

test('worker-stacks pause then resume: the file differs only in the paused line, then is back byte for byte', async () => {
  // GIVEN a hand-written object among the examples
  const dir = tempDir('pause-bytes');
  for (const f of fs.readdirSync(EXAMPLES_DIR).filter((x) => x.endsWith('.yaml')))
    fs.copyFileSync(path.join(EXAMPLES_DIR, f), path.join(dir, f));
  const file = path.join(dir, 'prod-eu1.yaml');
  const original = fs
    .readFileSync(file, 'utf8')
    .replace(/^spec:\n/m, 'spec:   # the spec\n  # account first\n')
    .replace(/\n {2}/g, '\n    ');
  fs.writeFileSync(file, original);
  fs.chmodSync(file, 0o640);
  const cli = (...argv: string[]) => runCli(argv, { out: () => undefined, err: () => undefined });

  // WHEN paused
  expect(await cli('pause', 'prod-eu1', '--clusters', dir)).toBe(0);

  // THEN one line was added, indented like the spec's keys, right under `spec:`; the file keeps its mode
  const paused = fs.readFileSync(file, 'utf8');
  expect(changedLines(original, paused)).toEqual({ removed: [], added: ['    paused: true'] });
  expect(paused).toContain('spec:   # the spec\n    paused: true\n    # account first\n');
  expect(fs.statSync(file).mode & 0o777).toBe(0o640);

  // WHEN resumed THEN the file is the original, byte for byte, and no temp file is left
  expect(await cli('resume', 'prod-eu1', '--clusters', dir)).toBe(0);
  expect(fs.readFileSync(file, 'utf8')).toBe(original);
  expect(fs.readdirSync(dir).filter((f) => !f.endsWith('.yaml'))).toEqual([]);
  fs.rmSync(dir, { recursive: true, force: true });
});
