import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadClusterFile, loadClusters, loadValidClusters, parseClusterYaml } from '../../lib/cluster/load';
import { ValidationError } from '../../lib/errors';
import { EXAMPLES_DIR, TEMPLATES, tempDir } from '../helpers/clusters';

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
    expect(r.problems).toEqual([{ file: 'clusters/staging-us1.yaml', path: '', message: `YAML syntax error at line ${line}, column 1: All mapping items must start at the same column` }]);
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
    expect(r.problems).toEqual([{ file: 'clusters/staging-us1.yaml', path: '', message: `YAML syntax error at line ${i + 2}, column 3: Map keys must be unique` }]);
  });

  test('two documents in one file are refused', () => {
    // GIVEN two cluster objects in one file
    const text = `${exampleText('staging-us1')}---\n${exampleText('prod-eu1')}`;

    // WHEN it is parsed
    const r = parseClusterYaml(text, 'clusters/staging-us1.yaml');

    // THEN the file is refused as a whole
    expect(r.raw).toBeUndefined();
    expect(r.problems).toEqual([{ file: 'clusters/staging-us1.yaml', path: '', message: 'holds 2 YAML documents; put exactly one WorkerCluster in each file' }]);
  });

  test('an empty file holds no object', () => {
    // GIVEN an empty file
    // WHEN it is parsed
    const r = parseClusterYaml('', 'clusters/empty.yaml');

    // THEN it is refused
    expect(r.problems).toEqual([{ file: 'clusters/empty.yaml', path: '', message: 'holds 0 YAML documents; put exactly one WorkerCluster in each file' }]);
  });

  test.each([
    ['an alias to an undefined anchor', 'a: *nowhere\n', /^YAML error: Unresolved alias .*nowhere$/],
    ['an alias bomb', 'a: &a [1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b]\n', /^YAML error: Excessive alias count/],
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
    const text = exampleText('staging-us1').replace('  tags:\n    team: platform', '  tags: &t\n    team: platform\nstatus: { lastTags: *t }');

    // WHEN it is parsed
    const r = parseClusterYaml(text, 'clusters/staging-us1.yaml');

    // THEN the object comes through
    expect(r.problems).toEqual([]);
    expect((r.raw as any).status).toEqual({ lastTags: { team: 'platform' } });
  });
});

describe('files (loadClusterFile, loadClusters, loadValidClusters)', () => {
  let root: string;
  let dir: string;
  beforeEach(() => {
    root = tempDir('load');
    dir = path.join(root, 'clusters');
    fs.mkdirSync(dir);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test('a file that cannot be read is a problem of that file', () => {
    // GIVEN a path that does not exist
    const file = path.join(dir, 'gone.yaml');

    // WHEN it is loaded
    const r = loadClusterFile(file, { templates: TEMPLATES, relativeTo: root });

    // THEN the problem names the file (relative) and the reason
    expect(r.cluster).toBeUndefined();
    expect(r.problems).toEqual([{ file: 'clusters/gone.yaml', path: '', message: expect.stringMatching(/^cannot be read: ENOENT/) }]);
  });

  test('a directory named like a cluster file is reported, and the other files still load', () => {
    // GIVEN a valid file and a directory called broken.yaml
    fs.copyFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), path.join(dir, 'staging-us1.yaml'));
    fs.mkdirSync(path.join(dir, 'broken.yaml'));

    // WHEN the directory is loaded
    const r = loadClusters(dir, { templates: TEMPLATES, relativeTo: root });

    // THEN the good cluster is there and the unreadable one is a problem
    expect(r.clusters.map((c) => [c.file, c.cluster.metadata.name])).toEqual([['clusters/staging-us1.yaml', 'staging-us1']]);
    expect(r.problems).toEqual([{ file: 'clusters/broken.yaml', path: '', message: expect.stringMatching(/^cannot be read: EISDIR/) }]);
  });

  test('loadValidClusters throws one ValidationError listing every problem of every file', () => {
    // GIVEN one valid file, one with a YAML error, one with two field errors, and a non-YAML file that is ignored
    fs.copyFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), path.join(dir, 'staging-us1.yaml'));
    fs.writeFileSync(path.join(dir, 'a-broken.yaml'), 'apiVersion: x\napiVersion: y\n');
    fs.writeFileSync(
      path.join(dir, 'prod-eu1.yaml'),
      exampleText('prod-eu1').replace('port: 443,', 'port: 70000,').replace('minSize: 3', 'minSize: 31'),
    );
    fs.writeFileSync(path.join(dir, 'README.md'), 'not a cluster\n');

    // WHEN the fleet is loaded strictly
    let error: unknown;
    try {
      loadValidClusters(dir, { templates: TEMPLATES, relativeTo: root });
    } catch (e) {
      error = e;
    }

    // THEN nothing is returned, and the error lists each problem as `file: path: message`
    expect(error).toBeInstanceOf(ValidationError);
    const v = error as ValidationError;
    expect(v.problems).toHaveLength(3);
    expect(v.message.split('\n')).toEqual([
      '3 problems in the cluster objects; nothing was synthesized or deployed:',
      '  clusters/a-broken.yaml: YAML syntax error at line 2, column 1: Map keys must be unique',
      '  clusters/prod-eu1.yaml: spec.listeners[0].port: 70000 is not a port (1-65535)',
      '  clusters/prod-eu1.yaml: spec.pool.minSize: 31 is greater than maxSize 30',
      '  fix: correct the fields named above, then run `worker-stacks validate` again',
    ]);
  });

  test('loadValidClusters returns every cluster of a valid fleet, in file-name order', () => {
    // GIVEN copies of the three examples (one as .yml)
    for (const name of ['staging-us1', 'edge-ap1']) fs.copyFileSync(path.join(EXAMPLES_DIR, `${name}.yaml`), path.join(dir, `${name}.yaml`));
    fs.copyFileSync(path.join(EXAMPLES_DIR, 'prod-eu1.yaml'), path.join(dir, 'prod-eu1.yml'));

    // WHEN the fleet is loaded strictly
    const clusters = loadValidClusters(dir, { templates: TEMPLATES, relativeTo: root });

    // THEN all three come back, with defaults applied
    expect(clusters.map((c) => c.file)).toEqual(['clusters/edge-ap1.yaml', 'clusters/prod-eu1.yml', 'clusters/staging-us1.yaml']);
    expect(clusters[1].cluster.spec.pool.rollingUpdate.waitOnResourceSignals).toBe(false);
  });
});
