/**
 * A hostile template directory (WORKER_STACKS_TEMPLATES, issue 21) as the file system's TemplateSource reads it
 * (lib/platform/files/template-directory.ts, template-files.ts): a link that leaves it, a link to /proc/self/environ,
 * a FIFO, a device, an oversized file. Each is refused with the file named, never read past its limit, never echoed,
 * and never hangs validate. Each test changes a private copy of cloudconfig/.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TemplateError } from '../../../lib/core/errors';
import { listTemplates } from '../../../lib/model/cloudconfig/templates';
import { MAX_TEMPLATE_FILE_BYTES } from '../../../lib/model/cloudconfig/template-source';
import {
  DEFAULT_TEMPLATES_DIR,
  defaultTemplates,
  templateDirectory,
} from '../../../lib/platform/files/template-directory';
import { REPO } from '../../helpers/clusters';
import { run } from '../../helpers/tools';
import {
  derivedStaging,
  validatedStaging,
  STAGING_FILE,
  templateCopyPerTest,
} from '../../fixtures/cloudconfig/template-copy';

const copy = templateCopyPerTest();
const replaceWith = (rel: string, make: (file: string) => void) => {
  const file = path.join(copy.dir, rel);
  fs.rmSync(file);
  make(file);
};

describe('the directory as a source', () => {
  test("labelled by its resolved path; the repository's is one source for the process", () => {
    expect(templateDirectory(path.relative(process.cwd(), copy.dir)).label).toBe(path.resolve(copy.dir));
    expect(templateDirectory(DEFAULT_TEMPLATES_DIR)).toBe(defaultTemplates());
    expect(templateDirectory(copy.dir).formatScripts).toBe(defaultTemplates());
  });

  test('entries are what they are themselves: a link is neither file nor directory', () => {
    fs.symlinkSync(path.join(copy.dir, 'al2023-worker'), path.join(copy.dir, 'linked'));
    const kinds = Object.fromEntries(
      templateDirectory(copy.dir)
        .entries('')
        .map((e) => [e.name, e.kind]),
    );
    expect(kinds).toMatchObject({
      _shared: 'directory',
      'al2023-worker': 'directory',
      'README.md': 'file',
      linked: 'other',
    });
    expect([...listTemplates(templateDirectory(copy.dir))]).not.toContain('linked');
    expect(templateDirectory(path.join(copy.root, 'none')).entries('')).toEqual([]);
  });

  test('exists, stat and readBytes follow the relative path; stat of nothing is undefined', () => {
    const source = templateDirectory(copy.dir);
    const rel = 'al2023-worker/template.yaml';
    expect(source.exists(rel)).toBe(true);
    expect(source.exists('al2023-worker/none.yaml')).toBe(false);
    expect(source.stat(rel)?.size).toBe(fs.statSync(path.join(copy.dir, rel)).size);
    expect(source.stat('none')).toBeUndefined();
    expect(Buffer.from(source.readBytes(rel)).equals(fs.readFileSync(path.join(copy.dir, rel)))).toBe(true);
  });

  test('readText gives LF line endings, and refuses by name what it does not read', () => {
    fs.writeFileSync(path.join(copy.dir, '_shared', 'crlf.hbs'), 'a\r\nb\r\n');
    fs.writeFileSync(path.join(copy.dir, '_shared', 'big.hbs'), '#'.repeat(MAX_TEMPLATE_FILE_BYTES + 1));
    const source = templateDirectory(copy.dir);
    expect(source.readText('_shared/crlf.hbs')).toBe('a\nb\n');
    expect(() => source.readText('_shared/big.hbs')).toThrow(TemplateError);
    expect(() => source.readText('_shared/big.hbs')).toThrow(
      `cloudconfig/_shared/big.hbs is ${MAX_TEMPLATE_FILE_BYTES + 1} bytes, more than the limit of ${MAX_TEMPLATE_FILE_BYTES}`,
    );
    expect(() => source.readText('../outside.txt')).toThrow(/cannot be read: ENOENT/);
  });
});

describe('files the directory holds that are not its own regular files are refused, never read', () => {
  test('a symbolic link that leaves the directory: its target lands nowhere', () => {
    // GIVEN the CA partial replaced by a link to a file outside the directory
    const outside = path.join(copy.root, 'outside.txt');
    fs.writeFileSync(outside, 'OUTSIDE-SECRET-BYTES\n');
    replaceWith('_shared/ca.crt.hbs', (f) => fs.symlinkSync(outside, f));
    // WHEN
    const d = derivedStaging(copy.dir);
    // THEN no config, and the problem names the link, on the template field, without the target or its bytes
    expect(d.config).toBeUndefined();
    expect(d.problems).toEqual([
      {
        file: STAGING_FILE,
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
    const d = derivedStaging(copy.dir);
    // THEN
    expect(d.problems).toEqual([
      {
        file: STAGING_FILE,
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
    const r = validatedStaging(copy.dir);
    // THEN
    expect(r.problems).toEqual([
      {
        file: STAGING_FILE,
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
    const d = derivedStaging(copy.dir);
    // THEN
    expect(d.problems).toEqual([
      {
        file: STAGING_FILE,
        path: 'spec.cloudConfig.template',
        message: expect.stringContaining(`${rel} is a FIFO (named pipe), not a regular file`),
        ...named,
      },
    ]);
  });

  test('a file over the size limit is refused by its size', () => {
    // GIVEN a template file of 300 KiB
    fs.writeFileSync(path.join(copy.dir, '_shared/sysctl.conf.hbs'), '#'.repeat(300 * 1024));
    // WHEN
    const d = derivedStaging(copy.dir);
    // THEN
    expect(d.problems).toEqual([
      {
        file: STAGING_FILE,
        path: 'spec.cloudConfig.template',
        message: expect.stringContaining('_shared/sysctl.conf.hbs is 307200 bytes, more than the limit of 262144'),
      },
    ]);
  });
});

test('cdk synth with a hostile template directory exits non-zero, naming the file, writing nothing', () => {
  // GIVEN the app's inputs: one valid object, and templates whose CA partial links out of the directory
  const clusters = path.join(copy.root, 'clusters');
  fs.mkdirSync(clusters);
  fs.copyFileSync(path.join(REPO, 'clusters', 'staging-us1.yaml'), path.join(clusters, 'staging-us1.yaml'));
  const outside = path.join(copy.root, 'outside.txt');
  fs.writeFileSync(outside, 'OUTSIDE-SECRET-BYTES\n');
  replaceWith('_shared/ca.crt.hbs', (f) => fs.symlinkSync(outside, f));
  const outdir = path.join(copy.root, 'cdk.out');
  // WHEN
  const r = run(process.execPath, ['bin/cdk-app.js'], {
    cwd: REPO,
    env: {
      ...process.env,
      WORKER_STACKS_CLUSTERS: clusters,
      WORKER_STACKS_TEMPLATES: copy.dir,
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
