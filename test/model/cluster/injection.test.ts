import * as fs from 'node:fs';
import * as path from 'node:path';
import { validateCluster } from '../../../lib/model/cluster/validate';
import { listTemplates } from '../../../lib/model/cloudconfig/templates';
import { BadRow, expectRefused } from '../../helpers/bad-input';
import { rawExample, tempDir } from '../../helpers/clusters';
import { copyTemplates } from '../../fixtures/cloudconfig/boot';
import { Json } from '../../helpers/json';
import {
  DEFAULT_TEMPLATES_DIR,
  defaultTemplates,
  templateDirectory,
} from '../../../lib/platform/files/template-directory';

/**
 * Node-config injection (issue 21): a value from the cluster object is written into root shell scripts, containerd's
 * TOML, YAML and systemd units on the node. The decision (docs/security-inputs.md): every string value a template
 * takes has a declared character set (the schema's for the values every template takes, a pattern or an enum in
 * values.yaml for a template's own), and no template value holds a control character; so no value can leave the
 * context it is written into, and the rendered bytes of valid objects do not change.
 */

const rows: BadRow[] = [
  ...['"', "'", '\\', '$', '`', ' ', '\n'].map((c): BadRow => ({
    what: `a registry mirror URL with ${JSON.stringify(c)} in its path`,
    example: 'prod-eu1',
    mutate: (r) => (r.spec.cloudConfig.values.registryMirrors = [`https://mirror.example.com/v2${c}x`]),
    path: 'spec.cloudConfig.values.registryMirrors[0]',
    message: /is not an https:\/\/ registry mirror URL$/,
  })),
];

describe('a core value that could break out of its file on the node is refused', () => {
  test.each(rows)('$what', (row) => expectRefused(row));

  test('a mirror URL with a path of the allowed characters stays valid', () => {
    const raw = rawExample('prod-eu1');
    raw.spec.cloudConfig.values.registryMirrors = ['https://mirror.example.com:5000/v2/docker.io,cache=1%20x~y+z'];
    expect(
      validateCluster(raw, { file: 'clusters/prod-eu1.yaml', templates: listTemplates(defaultTemplates()) }).problems,
    ).toEqual([]);
  });
});

describe("a template's own string values", () => {
  let dir: string;
  beforeEach(() => {
    dir = copyTemplates(DEFAULT_TEMPLATES_DIR, tempDir('injection'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const declare = (entry: string) => fs.appendFileSync(path.join(dir, 'al2023-worker', 'values.yaml'), entry);
  const check = (mutate: (raw: Json) => void = () => undefined) => {
    const raw = rawExample('staging-us1');
    mutate(raw);
    return validateCluster(raw, {
      file: 'clusters/staging-us1.yaml',
      templates: listTemplates(templateDirectory(dir)),
      templateSource: templateDirectory(dir),
    }).problems;
  };

  test.each([
    [
      'a string',
      '{ name: nodeGroup, type: string, default: a, description: the group }',
      /nodeGroup is a string without a pattern or enum; declare the characters it may hold/,
    ],
    [
      'a list',
      '{ name: extraArgs, type: list, default: [], description: kubelet flags }',
      /extraArgs is a list of strings without a pattern; declare/,
    ],
    [
      'a map',
      '{ name: extraEnv, type: map, default: {}, description: environment }',
      /extraEnv is a map of strings without a pattern; declare/,
    ],
  ])(
    '%s declared without a pattern makes the template unusable, named on the template field',
    (_what, entry, message) => {
      // GIVEN
      declare(`  - ${entry}\n`);
      // WHEN
      const problems = check();
      // THEN
      expect(problems).toEqual([
        {
          file: 'clusters/staging-us1.yaml',
          path: 'spec.cloudConfig.template',
          message: expect.stringMatching(message),
          rule: 'template-declaration',
        },
      ]);
    },
  );

  test.each([
    ['a shell command after a newline', 'ok\nrm -rf /', 'nodeGroup', /has a control character/],
    [
      'a list item with a quote',
      ['a', 'b"; evil'],
      'extraArgs',
      /^item 1: "b\\"; evil" does not match \[a-z=-\]\+ \(rule template-value\)$/,
    ],
    ['a map key with a newline', { 'A\nB': 'x' }, 'extraEnv', /has a control character/],
  ])('%s is refused even where the pattern is loose', (_what, value, name, message) => {
    // GIVEN loose patterns (a newline matches [^;]*)
    declare('  - { name: nodeGroup, type: string, pattern: "[^;]*", default: a, description: the group }\n');
    declare('  - { name: extraArgs, type: list, pattern: "[a-z=-]+", default: [], description: kubelet flags }\n');
    declare('  - { name: extraEnv, type: map, pattern: "[^;]*", default: {}, description: environment }\n');
    // WHEN
    const problems = check((raw) => (raw.spec.cloudConfig.values[name] = value));
    // THEN
    expect(problems).toEqual([
      {
        file: 'clusters/staging-us1.yaml',
        path: `spec.cloudConfig.values.${name}`,
        message: expect.stringMatching(message),
        rule: 'template-value',
      },
    ]);
  });
});
