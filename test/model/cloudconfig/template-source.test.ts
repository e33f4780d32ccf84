/**
 * The model reads templates only through its TemplateSource port (lib/model/cloudconfig/template-source.ts): here a
 * source held in memory, no file behind it, lists, compiles, renders, declares values and versions templates as the
 * file system's does. The file system's own behaviour: test/platform/files/template-directory.test.ts.
 */
import * as path from 'node:path';
import { TemplateError } from '../../../lib/core/errors';
import { renderConfig } from '../../../lib/model/cloudconfig/render';
import { TemplateEntry, TemplateSource } from '../../../lib/model/cloudconfig/template-source';
import { listTemplates, loadTemplate, templatesVersion } from '../../../lib/model/cloudconfig/templates';
import { validateCluster } from '../../../lib/model/cluster/validate';
import { example, rawExample } from '../../helpers/clusters';

/** A test double: files by their path under the root, their text as given; a directory is any prefix of a path. */
class MemorySource implements TemplateSource {
  private readonly files = new Map<string, string>();
  private readonly changed = new Map<string, number>();
  private clock = 0;

  public constructor(
    files: Record<string, string>,
    public readonly label: string,
  ) {
    for (const [file, text] of Object.entries(files)) this.write(file, text);
  }

  public get formatScripts(): TemplateSource {
    return this;
  }

  public write(file: string, text: string): void {
    this.files.set(file, text);
    this.changed.set(file, ++this.clock);
  }

  public entries(dir: string): readonly TemplateEntry[] {
    const prefix = dir ? `${dir}/` : '';
    const kinds = new Map<string, TemplateEntry['kind']>();
    for (const file of this.files.keys()) {
      if (!file.startsWith(prefix)) continue;
      const [name, ...deeper] = file.slice(prefix.length).split('/');
      kinds.set(name, deeper.length ? 'directory' : 'file');
    }
    return [...kinds].map(([name, kind]) => ({ name, kind }));
  }

  public exists(file: string): boolean {
    return this.files.has(file) || [...this.files.keys()].some((f) => f.startsWith(`${file}/`));
  }

  public stat(file: string) {
    const text = this.files.get(file);
    return text === undefined ? undefined : { size: Buffer.byteLength(text), mtimeMs: this.changed.get(file)! };
  }

  public readText(file: string): string {
    const text = this.files.get(file);
    if (text === undefined) throw new TemplateError(`${file} cannot be read: not in memory`);
    return text;
  }

  public readBytes(file: string): Uint8Array {
    return Buffer.from(this.readText(file), 'utf8');
  }
}

/** One label per test: the model's caches are keyed by it. */
let n = 0;
const memory = (files: Record<string, string>) => new MemorySource(files, `/memory/${++n}/cloudconfig`);

const MANIFEST = [
  'format: cloud-init',
  'description: a worker held in memory',
  'files:',
  '  - { path: /etc/greeting, mode: "0644", template: greeting.hbs }',
  '',
].join('\n');
const TEMPLATES = {
  'al2023-worker/template.yaml': MANIFEST,
  'al2023-worker/greeting.hbs': 'hello {{cluster.name}} {{> punctuation}}\n',
  '_shared/punctuation.hbs': '!',
  'notes/README.md': 'a directory without a manifest is no template',
};
const greeting = (source: TemplateSource) =>
  renderConfig(example('staging-us1'), source).node.files.find((f) => f.path === '/etc/greeting')?.contents;

test('templates are listed from the source: directories with a manifest, not _shared', () => {
  expect([...listTemplates(memory(TEMPLATES))]).toEqual(['al2023-worker']);
});

test('a template renders from the source, with its partials', () => {
  expect(greeting(memory(TEMPLATES))).toBe('hello staging-us1 !\n');
});

test('messages name files under the source label', () => {
  const source = memory(TEMPLATES);
  expect(() => loadTemplate('nope', source)).toThrow(
    `unknown cloud-config template "nope": ${path.join(source.label, 'nope', 'template.yaml')} does not exist`,
  );
});

test('compiled templates are kept until the source version moves', () => {
  // GIVEN a rendered template, then its file changed
  const source = memory(TEMPLATES);
  const before = templatesVersion(source);
  expect(greeting(source)).toBe('hello staging-us1 !\n');
  source.write('al2023-worker/greeting.hbs', 'bye {{cluster.name}}\n');
  // THEN the compiled template is reused until the version is read again, which moves and drops it
  expect(greeting(source)).toBe('hello staging-us1 !\n');
  expect(templatesVersion(source)).not.toBe(before);
  expect(greeting(source)).toBe('bye staging-us1\n');
});

test("validation reads a template's value declaration from the source", () => {
  // GIVEN the template declares a value of its own that it requires, which the object does not set
  const source = memory({
    ...TEMPLATES,
    'al2023-worker/values.yaml':
      'values:\n  - { name: greetingWord, type: string, pattern: "[a-z]{1,20}", required: true, description: the word it greets with }\n',
  });
  // WHEN
  const r = validateCluster(rawExample('staging-us1'), {
    file: 'clusters/staging-us1.yaml',
    templates: listTemplates(source),
  });
  // THEN
  expect(r.cluster).toBeUndefined();
  expect(r.problems.map((p) => p.path)).toContain('spec.cloudConfig.values.greetingWord');
});
