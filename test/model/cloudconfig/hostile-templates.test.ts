/**
 * A hostile template directory (WORKER_STACKS_TEMPLATES, issue 21): a link that leaves it, a link to
 * /proc/self/environ, a FIFO, a device, an oversized file, and a catastrophic regular expression in values.yaml.
 * Each is refused with the file named, never read past its limit, never echoed, and never hangs validate.
 * Each test changes a private copy of cloudconfig/.
 */
import { DEFAULT_TEMPLATES_DIR, templateDirectory } from '../../../lib/platform/files/template-directory';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { derive } from '../../../lib/model/cluster/derive';
import { validateCluster } from '../../../lib/model/cluster/validate';
import { listTemplates } from '../../../lib/model/cloudconfig/templates';
import { rawExample, REPO, tempDir } from '../../helpers/clusters';
import { run } from '../../helpers/tools';
import { copyTemplates } from '../../fixtures/cloudconfig/boot';
import { Json } from '../../helpers/json';

let root: string;
let dir: string;
beforeEach(() => {
  root = tempDir('hostile-templates');
  dir = copyTemplates(DEFAULT_TEMPLATES_DIR, path.join(root, 'cloudconfig'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const FILE = 'clusters/staging-us1.yaml';
/** staging-us1 (al2023-worker) through validate and render, as every command derives it. */
const derived = (mutate: (raw: Json) => void = () => undefined) => {
  const raw = rawExample('staging-us1');
  mutate(raw);
  return derive(raw, {
    file: FILE,
    templateSource: templateDirectory(dir),
    templates: listTemplates(templateDirectory(dir)),
  });
};
const replaceWith = (rel: string, make: (file: string) => void) => {
  const file = path.join(dir, rel);
  fs.rmSync(file);
  make(file);
};

describe('files the directory holds that are not its own regular files are refused, never read', () => {
  test('a symbolic link that leaves the directory: its target lands nowhere', () => {
    // GIVEN the CA partial replaced by a link to a file outside the directory
    const outside = path.join(root, 'outside.txt');
    fs.writeFileSync(outside, 'OUTSIDE-SECRET-BYTES\n');
    replaceWith('_shared/ca.crt.hbs', (f) => fs.symlinkSync(outside, f));
    // WHEN
    const d = derived();
    // THEN no config, and the problem names the link, on the template field, without the target or its bytes
    expect(d.config).toBeUndefined();
    expect(d.problems).toEqual([
      {
        file: FILE,
        path: 'spec.cloudConfig.template',
        message: expect.stringMatching(
          /cloudconfig\/_shared\/ca\.crt\.hbs resolves to a file outside the template directory/,
        ),
      },
    ]);
    expect(JSON.stringify(d.problems)).not.toMatch(/OUTSIDE-SECRET-BYTES|outside\.txt/);
  });

  test('a link to /proc/self/environ: no part of the environment in any message', () => {
    // GIVEN template.yaml linked to the process environment, which holds a canary
    process.env.WS_TEST_CANARY = 'canary-7f3a9c';
    replaceWith('al2023-worker/template.yaml', (f) => fs.symlinkSync('/proc/self/environ', f));
    // WHEN
    const d = derived();
    // THEN
    expect(d.problems).toEqual([
      {
        file: FILE,
        path: 'spec.cloudConfig.template',
        message: expect.stringMatching(
          /al2023-worker\/template\.yaml resolves to a file outside the template directory/,
        ),
      },
    ]);
    expect(JSON.stringify(d.problems)).not.toContain('canary-7f3a9c');
    delete process.env.WS_TEST_CANARY;
  });

  test('values.yaml linked to /dev/zero is refused, not read', () => {
    // GIVEN
    replaceWith('al2023-worker/values.yaml', (f) => fs.symlinkSync('/dev/zero', f));
    // WHEN validate (not even render) runs
    const r = validateCluster(rawExample('staging-us1'), {
      file: FILE,
      templates: listTemplates(templateDirectory(dir)),
      templateSource: templateDirectory(dir),
    });
    // THEN
    expect(r.problems).toEqual([
      {
        file: FILE,
        path: 'spec.cloudConfig.template',
        message: expect.stringMatching(/values\.yaml resolves to a file outside the template directory/),
        rule: 'template-declaration',
      },
    ]);
  });

  // values.yaml is the template's value declaration (rule template-declaration); the others are read at render time.
  test.each([
    ['values.yaml', 'al2023-worker/values.yaml', { rule: 'template-declaration' }],
    ['a partial', '_shared/kubelet.env.hbs', {}],
    ['template.yaml', 'al2023-worker/template.yaml', {}],
  ])('%s as a FIFO (nobody writes to it) does not hang: it is refused', (_what, rel, named) => {
    // GIVEN a named pipe in place of the file
    replaceWith(rel, (f) => execFileSync('mkfifo', [f]));
    // WHEN
    const d = derived();
    // THEN
    expect(d.problems).toEqual([
      {
        file: FILE,
        path: 'spec.cloudConfig.template',
        message: expect.stringContaining(`${rel} is a FIFO (named pipe), not a regular file`),
        ...named,
      },
    ]);
  });

  test('a file over the size limit is refused by its size', () => {
    // GIVEN a template file of 300 KiB
    fs.writeFileSync(path.join(dir, '_shared/sysctl.conf.hbs'), '#'.repeat(300 * 1024));
    // WHEN
    const d = derived();
    // THEN
    expect(d.problems).toEqual([
      {
        file: FILE,
        path: 'spec.cloudConfig.template',
        message: expect.stringContaining('_shared/sysctl.conf.hbs is 307200 bytes, more than the limit of 262144'),
      },
    ]);
  });
});

describe('patterns in values.yaml are matched in linear time, or refused', () => {
  const declare = (entry: string) => fs.appendFileSync(path.join(dir, 'al2023-worker', 'values.yaml'), entry);

  test('a catastrophic pattern, (a+)+, against 40 a and a b: refused in time, not hanging', () => {
    // GIVEN a declaration whose pattern makes a backtracking engine take 2^40 steps on this value
    declare('  - { name: nodeGroup, type: string, pattern: "(a+)+", default: a, description: the group }\n');
    // WHEN
    const r = validateCluster(
      (() => {
        const raw = rawExample('staging-us1');
        raw.spec.cloudConfig.values.nodeGroup = `${'a'.repeat(40)}b`;
        return raw;
      })(),
      { file: FILE, templates: listTemplates(templateDirectory(dir)), templateSource: templateDirectory(dir) },
    );
    // THEN
    expect(r.problems).toEqual([
      {
        file: FILE,
        path: 'spec.cloudConfig.values.nodeGroup',
        message: `"${'a'.repeat(40)}b" does not match (a+)+ (rule template-value)`,
        rule: 'template-value',
      },
    ]);
  });

  test.each([
    ['a back-reference', '(a)\\\\1', /the escape \\1/],
    ['a lookahead', '(?=a)a', /a group other than \(\.\.\.\) or \(\?:\.\.\.\)/],
    ['a lazy quantifier', 'a+?', /a lazy or possessive quantifier/],
    ['a repeat count over 100', 'a{1000}', /a repeat count above 100/],
    ['repeats that expand past the state limit', '(((a{100}){100}){100})', /too large/],
  ])('%s is refused on the declaration', (_what, pattern, message) => {
    // GIVEN
    declare(`  - { name: nodeGroup, type: string, pattern: "${pattern}", default: a, description: the group }\n`);
    // WHEN
    const r = validateCluster(rawExample('staging-us1'), {
      file: FILE,
      templates: listTemplates(templateDirectory(dir)),
      templateSource: templateDirectory(dir),
    });
    // THEN
    expect(r.problems).toEqual([
      {
        file: FILE,
        path: 'spec.cloudConfig.template',
        message: expect.stringMatching(message),
        rule: 'template-declaration',
      },
    ]);
  });
});

test('cdk synth with a hostile template directory exits non-zero, naming the file, writing nothing', () => {
  // GIVEN the app's inputs: one valid object, and templates whose CA partial links out of the directory
  const clusters = path.join(root, 'clusters');
  fs.mkdirSync(clusters);
  fs.copyFileSync(path.join(REPO, 'clusters', 'staging-us1.yaml'), path.join(clusters, 'staging-us1.yaml'));
  const outside = path.join(root, 'outside.txt');
  fs.writeFileSync(outside, 'OUTSIDE-SECRET-BYTES\n');
  replaceWith('_shared/ca.crt.hbs', (f) => fs.symlinkSync(outside, f));
  const outdir = path.join(root, 'cdk.out');
  // WHEN
  const r = run(process.execPath, ['bin/cdk-app.js'], {
    cwd: REPO,
    env: {
      ...process.env,
      WORKER_STACKS_CLUSTERS: clusters,
      WORKER_STACKS_TEMPLATES: dir,
      CDK_OUTDIR: outdir,
      WORKER_STACKS_NAG: 'false',
      CDK_VALIDATION: 'false',
    },
  });
  // THEN
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/cloudconfig\/_shared\/ca\.crt\.hbs resolves to a file outside the template directory/);
  expect(r.stderr).not.toContain('OUTSIDE-SECRET-BYTES');
  expect(fs.existsSync(path.join(outdir, 'WorkerStack-staging-us1.template.json'))).toBe(false);
}, 120_000);

describe('a template manifest that is a YAML bomb (issue 32 item 11)', () => {
  test.each([
    [
      'an alias bomb (nine levels of nine aliases)',
      Array.from({ length: 7 }, (_, i) =>
        i === 0
          ? 'x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]'
          : `x${i}: &a${i} [${Array.from({ length: 9 }, () => `*a${i - 1}`).join(', ')}]`,
      ).join('\n'),
      /not a template manifest: Excessive alias count/,
    ],
    ['a key twice', 'format: cloud-init', /not a template manifest: .*[Mm]ap keys must be unique/],
  ])('%s is refused naming the manifest, on the template field', (_what, prefix, rule) => {
    // GIVEN al2023-worker's template.yaml with that prepended
    const file = path.join(dir, 'al2023-worker', 'template.yaml');
    fs.writeFileSync(file, `${prefix}\n${fs.readFileSync(file, 'utf8')}`);
    // WHEN staging-us1 (al2023-worker) is derived, as validate and cdk synth derive it
    const d = derived();
    // THEN one problem, on the template field, that names the manifest and the rule
    expect(d.config).toBeUndefined();
    expect(d.problems).toEqual([
      {
        file: FILE,
        path: 'spec.cloudConfig.template',
        message: expect.stringMatching(new RegExp(`al2023-worker/template\\.yaml: ${rule.source}`)),
      },
    ]);
  });
});
