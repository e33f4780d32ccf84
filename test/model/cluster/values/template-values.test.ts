import * as fs from 'node:fs';
import * as path from 'node:path';
import { validateCluster } from '../../../../lib/model/cluster/validate';
import { renderConfig } from '../../../../lib/model/cloudconfig/render';
import { listTemplates } from '../../../../lib/model/cloudconfig/templates';
import { runCli } from '../../../../lib/adapters/cli/program';
import { EXAMPLES_DIR, rawExample, tempDir, TEMPLATES } from '../../../helpers/clusters';
import { copyTemplates } from '../../../fixtures/cloudconfig/boot';
import { Json } from '../../../helpers/json';
import { DEFAULT_TEMPLATES_DIR, templateDirectory } from '../../../../lib/platform/files/template-directory';

/**
 * Typed values per config template (issue 10, item 13): a template declares its own values in values.yaml next
 * to template.yaml; spec.cloudConfig.values is checked against the chosen template's declaration, defaults apply,
 * and a template gains a kubelet setting with no change in lib/.
 */

let dir: string;
beforeEach(() => {
  // GIVEN (for every test) a copy of the templates where al2023-worker takes a kubelet log level of its own:
  // declared in its values.yaml and used in its own file, with nothing changed in lib/
  dir = copyTemplates(DEFAULT_TEMPLATES_DIR, tempDir('template-values'));
  fs.appendFileSync(
    path.join(dir, 'al2023-worker', 'values.yaml'),
    [
      '  - name: kubeletLogLevel',
      '    type: integer',
      '    min: 0',
      '    max: 10',
      '    default: 2',
      '    description: kubelet --v',
      '',
    ].join('\n'),
  );
  fs.appendFileSync(
    path.join(dir, 'al2023-worker', 'bootstrap-token.sh.hbs'),
    '# kubelet log level {{values.kubeletLogLevel}}\n',
  );
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function check(mutate: (raw: Json) => void) {
  const raw = rawExample('staging-us1');
  mutate(raw);
  return validateCluster(raw, { file: 'clusters/staging-us1.yaml', templates: listTemplates(templateDirectory(dir)) });
}

const bootScript = (r: ReturnType<typeof check>) =>
  renderConfig(r.cluster!, templateDirectory(dir)).node.files.find(
    (f) => f.path === '/opt/bin/worker-stacks-bootstrap-token',
  )!.contents;

test('a declared value left out gets its declared default, and renders', () => {
  // WHEN the object does not set it
  const r = check(() => undefined);
  // THEN
  expect(r.problems).toEqual([]);
  expect(r.cluster!.spec.cloudConfig.values.kubeletLogLevel).toBe(2);
  expect(bootScript(r)).toMatch(/# kubelet log level 2\n$/);
});

test('a declared value set in the object renders', () => {
  const r = check((raw) => (raw.spec.cloudConfig.values.kubeletLogLevel = 7));
  expect(r.problems).toEqual([]);
  expect(bootScript(r)).toMatch(/# kubelet log level 7\n$/);
});

test.each([
  ['a quoted number', '7', /^"7" is a string, expected a whole number \(remove the quotes\) \(rule template-value\)$/],
  ['out of its range', 11, /^11 is outside 0-10 \(rule template-value\)$/],
  ['a list', [1], /^is a list, expected a whole number \(rule template-value\)$/],
])('a declared value that breaks its declaration is refused: %s', (_what, value, message) => {
  const r = check((raw) => (raw.spec.cloudConfig.values.kubeletLogLevel = value));
  expect(r.problems).toEqual([
    {
      file: 'clusters/staging-us1.yaml',
      path: 'spec.cloudConfig.values.kubeletLogLevel',
      message: expect.stringMatching(message),
      rule: 'template-value',
    },
  ]);
});

test('a value the chosen template does not declare is refused, naming what the template takes', () => {
  const r = check((raw) => (raw.spec.cloudConfig.values.kubeletLogLvl = 7));
  expect(r.problems).toEqual([
    {
      file: 'clusters/staging-us1.yaml',
      path: 'spec.cloudConfig.values.kubeletLogLvl',
      message:
        'unknown value: template al2023-worker does not declare it (it also takes kubeletSha256, kubeletLogLevel; see docs/reference.md) (rule template-value-known)',
      rule: 'template-value-known',
    },
  ]);
});

test("another template's value is unknown to a template that does not declare it (the repository's templates)", () => {
  const raw = rawExample('prod-eu1');
  raw.spec.cloudConfig.values.kubeletLogLevel = 7;
  const r = validateCluster(raw, { file: 'clusters/prod-eu1.yaml', templates: TEMPLATES });
  expect(r.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
    'spec.cloudConfig.values.kubeletLogLevel: unknown value: template flatcar-worker does not declare it (it also takes kubeletSha256, awsCliImage; see docs/reference.md) (rule template-value-known)',
  ]);
});

test('a required declared value that is missing is refused', () => {
  fs.appendFileSync(
    path.join(dir, 'al2023-worker', 'values.yaml'),
    [
      '  - name: nodeGroup',
      '    type: string',
      '    pattern: "[a-z0-9-]{1,63}"',
      '    required: true',
      '    description: the node group',
      '',
    ].join('\n'),
  );
  const r = check(() => undefined);
  expect(r.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
    'spec.cloudConfig.values.nodeGroup: required field is missing (template al2023-worker needs it: the node group) (rule template-value-required)',
  ]);
});

test('a bad declaration is refused on the template field, naming the declaration file and entry', () => {
  fs.appendFileSync(
    path.join(dir, 'al2023-worker', 'values.yaml'),
    [
      '  - name: swap',
      '    type: boolean',
      '    required: true',
      '    default: false',
      '    description: swap',
      '',
    ].join('\n'),
  );
  const r = check(() => undefined);
  expect(r.problems).toEqual([
    {
      file: 'clusters/staging-us1.yaml',
      path: 'spec.cloudConfig.template',
      message: expect.stringMatching(
        /^template al2023-worker has a bad value declaration: \S+\/al2023-worker\/values\.yaml: values\.12: a value is either required or has a default, not both \(rule template-declaration\)$/,
      ),
      rule: 'template-declaration',
    },
  ]);
});

test.each([
  {
    name: 'keyPattern is refused on a value that is not a map',
    given: 'a declaration that gives a string value a key pattern',
    entry: [
      '  - name: arch',
      '    type: string',
      '    pattern: "[a-z0-9]+"',
      '    keyPattern: "[a-z]+"',
      '    default: amd64',
      '    description: arch',
    ],
    message: /values\.yaml: values\.12\.keyPattern: keyPattern is for a map value only \(rule template-declaration\)$/,
  },
  {
    name: 'multiline is refused on a value that is not a string: newlines are let into strings written as YAML alone',
    given: 'a declaration that lets a list hold newlines',
    entry: [
      '  - name: lines',
      '    type: list',
      '    pattern: "[a-z]+"',
      '    multiline: true',
      '    default: []',
      '    description: lines',
    ],
    message: /values\.yaml: values\.12\.multiline: multiline is for a string value only \(rule template-declaration\)$/,
  },
  {
    name: 'nested is refused on a value that is not a map: only a map written through json into YAML may nest',
    given: 'a declaration that lets a list nest',
    entry: [
      '  - name: items',
      '    type: list',
      '    pattern: "[a-z]+"',
      '    nested: true',
      '    default: []',
      '    description: items',
    ],
    message: /values\.yaml: values\.12\.nested: nested is for a map value only \(rule template-declaration\)$/,
  },
])('$name', ({ entry, message }) => {
  // GIVEN the declaration (`given`) appended to al2023-worker's values.yaml
  fs.appendFileSync(path.join(dir, 'al2023-worker', 'values.yaml'), [...entry, ''].join('\n'));
  // WHEN / THEN
  expect(check(() => undefined).problems).toEqual([
    {
      file: 'clusters/staging-us1.yaml',
      path: 'spec.cloudConfig.template',
      message: expect.stringMatching(message),
      rule: 'template-declaration',
    },
  ]);
});

test.each<[string, Json, string]>([
  ['a list', { amd64: ['a'] }, '"amd64": is a list, expected a string, number or boolean (rule template-value)'],
  ['a map', { amd64: { a: 'b' } }, '"amd64": is a map, expected a string, number or boolean (rule template-value)'],
])('a map that does not say nested refuses %s as a value', (_what, value, message) => {
  // GIVEN al2023-worker's kubeletSha256, a map without nested
  // WHEN one of its values is itself a list or a map
  const r = check((raw) => (raw.spec.cloudConfig.values.kubeletSha256 = value));
  // THEN
  expect(r.problems).toEqual([
    {
      file: 'clusters/staging-us1.yaml',
      path: 'spec.cloudConfig.values.kubeletSha256',
      message,
      rule: 'template-value',
    },
  ]);
});

test('a map with keyPattern checks its keys against keyPattern and its values against pattern', () => {
  // GIVEN al2023-worker's kubeletSha256 (keys amd64|arm64, values 64 hex)
  // WHEN a key is a hash and a value an architecture name
  const r = check((raw) => (raw.spec.cloudConfig.values.kubeletSha256 = { ['a'.repeat(64)]: 'amd64' }));
  // THEN the key is refused by the key pattern
  expect(r.problems).toEqual([
    {
      file: 'clusters/staging-us1.yaml',
      path: 'spec.cloudConfig.values.kubeletSha256',
      message: `"${'a'.repeat(64)}": "${'a'.repeat(64)}" does not match amd64|arm64 (rule template-value)`,
      rule: 'template-value',
    },
  ]);
});

describe('render and validate on a template that uses an undeclared value', () => {
  const cwd = process.cwd();
  afterEach(() => process.chdir(cwd));

  test('exit 1 with the cluster file, the template file and line and the value; never exit 2 or [object Object]', async () => {
    // GIVEN a shared template file that uses a value no template declares
    fs.appendFileSync(path.join(dir, '_shared', 'kubelet.env.hbs'), '# {{values.evictionHard}}\n');
    const out: string[] = [];
    const io = { out: (t: string) => out.push(t), err: (t: string) => out.push(t) };
    process.chdir(path.dirname(EXAMPLES_DIR));

    // WHEN render and validate run
    const render = await runCli(['render', 'staging-us1', '--templates', dir], io);
    const validate = await runCli(['validate', '--templates', dir], io);

    // THEN both exit 1 and name the cluster file, the template file and line, and the value, in the same words
    // (both derive the object through lib/model/cluster/derive.ts)
    expect([render, validate]).toEqual([1, 1]);
    const text = out.join('');
    const [renderLine, ...validateLines] = text.split('\n');
    expect(renderLine).toMatch(
      /^clusters\/staging-us1\.yaml: spec\.cloudConfig\.template: does not render: template al2023-worker uses values it does not declare: \S+\/_shared\/kubelet\.env\.hbs:\d+: uses values\.evictionHard/,
    );
    expect(validateLines).toContain(renderLine);
    expect(text).toMatch(
      /clusters\/prod-eu1\.yaml: spec\.cloudConfig\.template: does not render: template flatcar-worker uses values it does not declare: \S+\/_shared\/kubelet\.env\.hbs:\d+: uses values\.evictionHard/,
    );
    expect(text).not.toMatch(/\[object Object\]/);
  });
});
