import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseClusterYaml } from '../../../lib/model/cluster/load';
import { EXAMPLES_DIR } from '../../helpers/clusters';
import { Json } from '../../helpers/json';

const exampleText = (name: string) => fs.readFileSync(path.join(EXAMPLES_DIR, `${name}.yaml`), 'utf8');

/** staging-us1's YAML with the first line containing `marker` replaced by `replacement`; returns the text and that 1-based line number. */
function withLine(marker: string, replacement: string): { text: string; line: number } {
  const lines = exampleText('staging-us1').split('\n');
  const i = lines.findIndex((l) => l.includes(marker));
  if (i < 0) throw new Error(`no line with ${marker}`);
  lines[i] = replacement;
  return { text: lines.join('\n'), line: i + 1 };
}

describe('YAML-level problems (parseClusterYaml)', () => {
  test('a mis-indented key is a syntax error that names its line', () => {
    // GIVEN staging-us1 with machineImage indented too far
    const { text, line } = withLine('machineImage:', '      machineImage: ami-1a2b3c4d5e6f70819');

    // WHEN it is parsed
    const r = parseClusterYaml(text, 'clusters/staging-us1.yaml');

    // THEN one problem for the whole file, at that line
    expect(r.raw).toBeUndefined();
    expect(r.problems).toEqual([
      {
        file: 'clusters/staging-us1.yaml',
        path: '',
        message: `YAML syntax error at line ${line}, column 1: All mapping items must start at the same column`,
      },
    ]);
  });

  test('a stray colon is a syntax error that names its line and column', () => {
    // GIVEN staging-us1 with `maxSize: 4: 5`
    const { text, line } = withLine('maxSize:', '    maxSize: 4: 5');

    // WHEN it is parsed
    const r = parseClusterYaml(text, 'clusters/staging-us1.yaml');

    // THEN the problem names the line of the mistake
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0].message).toMatch(new RegExp(`^YAML syntax error at line ${line}, column \\d+: `));
  });

  test('a duplicate key is refused, naming its line', () => {
    // GIVEN staging-us1 with `region:` given twice in spec
    const lines = exampleText('staging-us1').split('\n');
    const i = lines.findIndex((l) => l.startsWith('  region:'));
    lines.splice(i + 1, 0, '  region: us-west-2');

    // WHEN it is parsed
    const r = parseClusterYaml(lines.join('\n'), 'clusters/staging-us1.yaml');

    // THEN the second one is the problem
    expect(r.raw).toBeUndefined();
    expect(r.problems).toEqual([
      {
        file: 'clusters/staging-us1.yaml',
        path: '',
        message: `YAML syntax error at line ${i + 2}, column 3: Map keys must be unique`,
      },
    ]);
  });

  test('two documents in one file are refused', () => {
    // GIVEN two cluster objects in one file
    const text = `${exampleText('staging-us1')}---\n${exampleText('prod-eu1')}`;

    // WHEN it is parsed
    const r = parseClusterYaml(text, 'clusters/staging-us1.yaml');

    // THEN the file is refused as a whole
    expect(r.raw).toBeUndefined();
    expect(r.problems).toEqual([
      {
        file: 'clusters/staging-us1.yaml',
        path: '',
        message: 'holds 2 YAML documents; put exactly one WorkerCluster in each file',
      },
    ]);
  });

  test('an empty file holds no object', () => {
    // GIVEN an empty file
    // WHEN it is parsed
    const r = parseClusterYaml('', 'clusters/empty.yaml');

    // THEN it is refused
    expect(r.problems).toEqual([
      {
        file: 'clusters/empty.yaml',
        path: '',
        message: 'holds 0 YAML documents; put exactly one WorkerCluster in each file',
      },
    ]);
  });

  test.each([
    ['an alias to an undefined anchor', 'a: *nowhere\n', /^YAML error: Unresolved alias .*nowhere$/],
    [
      'an alias bomb',
      'a: &a [1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b]\n',
      /^YAML error: Excessive alias count/,
    ],
  ])('%s is a problem, not a crash', (_what, text, message) => {
    // GIVEN YAML that parses but cannot become a plain object
    // WHEN it is parsed
    const r = parseClusterYaml(text, 'clusters/x.yaml');

    // THEN it is reported as a problem of the file
    expect(r.raw).toBeUndefined();
    expect(r.problems).toEqual([{ file: 'clusters/x.yaml', path: '', message: expect.stringMatching(message) }]);
  });

  test('anchors and aliases that resolve are fine', () => {
    // GIVEN staging-us1 with its tags written through an anchor
    const text = exampleText('staging-us1').replace(
      '  tags:\n    team: platform',
      '  tags: &t\n    team: platform\nstatus: { lastTags: *t }',
    );

    // WHEN it is parsed
    const r = parseClusterYaml(text, 'clusters/staging-us1.yaml');

    // THEN the object comes through
    expect(r.problems).toEqual([]);
    expect((r.raw as Json).status).toEqual({ lastTags: { team: 'platform' } });
  });
});
