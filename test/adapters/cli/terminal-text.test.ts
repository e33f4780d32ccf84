import * as fs from 'node:fs';
import * as path from 'node:path';
import { terminalText } from '../../../lib/adapters/cli/terminal-text';
import { EXAMPLES_DIR, REPO, tempDir } from '../../helpers/clusters';
import { run } from '../../helpers/tools';

describe("terminalText: no string from outside acts on the reader's terminal", () => {
  test.each([
    ['a window-title sequence (OSC)', 'a\x1b]0;owned\x07b', 'a\\x1b]0;owned\\x07b'],
    ['a clipboard write (OSC 52)', '\x1b]52;c;ZWNobyBoaQ==\x07', '\\x1b]52;c;ZWNobyBoaQ==\\x07'],
    ['a cursor move', 'ok\x1b[2Aline', 'ok\\x1b[2Aline'],
    [
      'a carriage return that would overwrite the line',
      'UPDATE_FAILED\rUPDATE_COMPLETE',
      'UPDATE_FAILED\\rUPDATE_COMPLETE',
    ],
    ['a C1 control (CSI in one byte)', 'x\u009b2Jy', 'x\\u009b2Jy'],
    ['DEL and NUL', 'a\x7fb\x00c', 'a\\x7fb\\0c'],
    ['a bare ESC', 'a\x1b', 'a\\x1b'],
    ['newline and tab (the layout)', 'a\tb\nc\n', 'a\tb\nc\n'],
    ['a colour the output sets itself', '\x1b[31mred\x1b[0m', '\x1b[31mred\x1b[0m'],
    ['plain text and non-ASCII letters', 'prod-eu1 Zürich 東京', 'prod-eu1 Zürich 東京'],
  ])('%s', (_what, input, shown) => {
    // WHEN / THEN
    expect(terminalText(input)).toBe(shown);
  });
});

test('a cluster file whose name holds an escape sequence is named, not obeyed, by the CLI', () => {
  // GIVEN a fleet with a valid object and a file whose name carries a window-title sequence
  const root = tempDir('terminal');
  const dir = path.join(root, 'clusters');
  fs.mkdirSync(dir);
  fs.copyFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), path.join(dir, 'staging-us1.yaml'));
  fs.writeFileSync(path.join(dir, 'evil\x1b]0;owned\x07.yaml'), 'kind: WorkerCluster\n');

  // WHEN validate runs as a process
  const r = run('node', [path.join(REPO, 'bin', 'worker-stacks.js'), 'validate', '--clusters', 'clusters'], {
    cwd: root,
  });

  // THEN it fails on that file, names it with the sequence escaped, and prints no raw escape character
  expect(r.status).toBe(1);
  const output = r.stdout + r.stderr;
  expect(output).toContain('clusters/evil\\x1b]0;owned\\x07.yaml');
  // eslint-disable-next-line no-control-regex -- control characters are what the test looks for
  expect(output).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  fs.rmSync(root, { recursive: true, force: true });
});
