/**
 * Rendering is deterministic: the same inputs give the same bytes, whatever
 * the order of keys and lists in the YAML or in a template manifest, and
 * whatever line endings a checkout gave the templates. The checksum is the
 * SHA-256 of exactly those bytes, and any change of a value changes it.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { renderConfig } from '../../../lib/model/cloudconfig/render';
import { FORMATS } from '../../../lib/model/cloudconfig/formats';
import { configUserData } from '../../../lib/model/cloudconfig/user-data';
import { BOOTSTRAP_EXAMPLES, example, EXAMPLE_NAMES, tempDir, variant } from '../../helpers/clusters';
import { copyTemplates } from '../../fixtures/cloudconfig/boot';
import { Json } from '../../helpers/json';
import {
  DEFAULT_TEMPLATES_DIR,
  defaultTemplates,
  templateDirectory,
} from '../../../lib/platform/files/template-directory';

const dirs: string[] = [];
function scratch(prefix: string): string {
  const d = tempDir(prefix);
  dirs.push(d);
  return d;
}
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** Every mapping in the object with its keys in reverse order (what a YAML author may write). */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .reverse()
        .map((k) => [k, reverseKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

const TAINTS = [
  { key: 'example.com/gpu', value: 'true', effect: 'NoSchedule' },
  { key: 'example.com/gpu', value: 'true', effect: 'NoExecute' },
  { key: 'dedicated', value: 'ml', effect: 'PreferNoSchedule' },
  { key: 'dedicated.example.com', effect: 'NoSchedule' },
];

describe('same inputs, same bytes', () => {
  test.each(EXAMPLE_NAMES)('%s renders byte-identical bytes twice, from separately loaded objects', (name) => {
    // GIVEN
    const a = example(name);
    const b = example(name);
    // WHEN
    const first = renderConfig(a, defaultTemplates());
    const second = renderConfig(b, defaultTemplates());
    // THEN
    expect(second.bytes.equals(first.bytes)).toBe(true);
    expect(second.checksum).toBe(first.checksum);
  });

  test.each(EXAMPLE_NAMES)('%s: reversing every key of the YAML, the node labels included, changes no byte', (name) => {
    // GIVEN
    const addLabels = (raw: Json) => {
      const v = raw.spec.cloudConfig.values;
      v.nodeLabels = { ...v.nodeLabels, zz: 'y', 'a.example.com/first': 'x', 'm.example.com/middle': 'z' };
    };
    const forward = variant(name, addLabels);
    // WHEN
    const reversed = variant(name, (raw) => {
      addLabels(raw);
      raw.metadata = reverseKeys(raw.metadata);
      raw.spec = reverseKeys(raw.spec);
    });
    // THEN (the schema rebuilds objects in its own key order; a record such as nodeLabels keeps the YAML's order)
    const labels = (c: typeof forward) => Object.keys(c.spec.cloudConfig.values.nodeLabels);
    expect(labels(reversed)).toEqual([...labels(forward)].reverse());
    expect(
      renderConfig(reversed, defaultTemplates()).bytes.equals(renderConfig(forward, defaultTemplates()).bytes),
    ).toBe(true);
  });

  test.each(EXAMPLE_NAMES)('%s: the order of the node taints list changes no byte', (name) => {
    // GIVEN
    const forward = variant(name, (raw) => (raw.spec.cloudConfig.values.nodeTaints = TAINTS));
    // WHEN
    const backward = variant(name, (raw) => (raw.spec.cloudConfig.values.nodeTaints = [...TAINTS].reverse()));
    const rotated = variant(
      name,
      (raw) => (raw.spec.cloudConfig.values.nodeTaints = [...TAINTS.slice(2), ...TAINTS.slice(0, 2)]),
    );
    // THEN
    const bytes = renderConfig(forward, defaultTemplates()).bytes;
    expect(renderConfig(backward, defaultTemplates()).bytes.equals(bytes)).toBe(true);
    expect(renderConfig(rotated, defaultTemplates()).bytes.equals(bytes)).toBe(true);
  });

  test.each(BOOTSTRAP_EXAMPLES)('%s: reversed file and unit lists in the template manifest change no byte', (name) => {
    // GIVEN
    const cluster = example(name);
    const reversed = copyTemplates(DEFAULT_TEMPLATES_DIR, scratch('manifest-order'), (text, rel) => {
      if (path.basename(rel) !== 'template.yaml') return text;
      const manifest = parse(text);
      return stringify({ ...manifest, units: [...manifest.units].reverse(), files: [...manifest.files].reverse() });
    });
    // WHEN
    const original = renderConfig(cluster, defaultTemplates());
    const fromReversed = renderConfig(cluster, templateDirectory(reversed));
    // THEN
    const manifest = parse(
      fs.readFileSync(path.join(reversed, cluster.spec.cloudConfig.template, 'template.yaml'), 'utf8'),
    );
    expect(manifest.files[0].path).toBe('/opt/bin/worker-stacks-signal-ready');
    expect(fromReversed.bytes.equals(original.bytes)).toBe(true);
  });

  test.each(EXAMPLE_NAMES)('%s: templates with CRLF line endings give the same bytes as with LF', (name) => {
    // GIVEN
    const cluster = example(name);
    const crlf = copyTemplates(DEFAULT_TEMPLATES_DIR, scratch('crlf'), (text) => text.replace(/\r?\n/g, '\r\n'));
    // WHEN
    const original = renderConfig(cluster, defaultTemplates());
    const fromCrlf = renderConfig(cluster, templateDirectory(crlf));
    // THEN
    expect(fs.readFileSync(path.join(crlf, '_shared', 'kubelet.service.hbs'), 'utf8')).toContain('\r\n');
    expect(fromCrlf.bytes.equals(original.bytes)).toBe(true);
  });

  test('a relative template directory, with a trailing slash, renders the same bytes', () => {
    // GIVEN
    const cluster = example(EXAMPLE_NAMES[0]);
    const relative = `${path.relative(process.cwd(), DEFAULT_TEMPLATES_DIR)}/`;
    // WHEN
    const fromRelative = renderConfig(cluster, templateDirectory(relative));
    // THEN
    expect(path.isAbsolute(relative)).toBe(false);
    expect(fromRelative.bytes.equals(renderConfig(cluster, defaultTemplates()).bytes)).toBe(true);
  });
});

describe('the checksum is the SHA-256 of exactly the bytes', () => {
  test.each(EXAMPLE_NAMES)('%s: checksum, extension and LF line endings', (name) => {
    // GIVEN
    const cluster = example(name);
    // WHEN
    const config = renderConfig(cluster, defaultTemplates());
    const userData = configUserData(config, `s3://b/${config.checksum}.${config.extension}`, defaultTemplates());
    // THEN
    expect(config.checksum).toBe(createHash('sha256').update(config.bytes).digest('hex'));
    expect(config.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(config.extension).toBe(FORMATS[config.format].extension);
    expect(['ign', 'yaml', 'nodeconfig', 'toml']).toContain(config.extension);
    expect(config.bytes.includes('\r')).toBe(false);
    expect(config.bytes.toString('utf8').endsWith('\n')).toBe(true);
    expect(userData).not.toContain('\r');
    expect(Buffer.from(config.bytes.toString('utf8'), 'utf8').equals(config.bytes)).toBe(true);
  });
});

describe('one changed value changes the checksum', () => {
  test.each(BOOTSTRAP_EXAMPLES)('%s: maxPods changes only the kubelet config', (name) => {
    // GIVEN
    const before = renderConfig(example(name), defaultTemplates());
    // WHEN
    const after = renderConfig(
      variant(
        name,
        (raw) => (raw.spec.cloudConfig.values.maxPods = Number(raw.spec.cloudConfig.values.maxPods ?? 110) + 1),
      ),
      defaultTemplates(),
    );
    // THEN
    expect(after.checksum).not.toBe(before.checksum);
    const changed = after.node.files.filter((f, i) => f.contents !== before.node.files[i].contents).map((f) => f.path);
    expect(changed).toEqual(['/var/lib/kubelet/config.yaml']);
    expect(after.node.units).toEqual(before.node.units);
  });

  test.each(BOOTSTRAP_EXAMPLES)('%s: one node label changes only the kubelet environment', (name) => {
    // GIVEN
    const before = renderConfig(example(name), defaultTemplates());
    // WHEN
    const after = renderConfig(
      variant(
        name,
        (raw) =>
          (raw.spec.cloudConfig.values.nodeLabels = {
            ...raw.spec.cloudConfig.values.nodeLabels,
            'example.com/new': 'yes',
          }),
      ),
      defaultTemplates(),
    );
    // THEN
    expect(after.checksum).not.toBe(before.checksum);
    const changed = after.node.files.filter((f, i) => f.contents !== before.node.files[i].contents).map((f) => f.path);
    expect(changed).toEqual(['/etc/kubernetes/kubelet.env']);
  });

  test('a value the templates do not use (the stack tags) changes nothing', () => {
    // GIVEN
    const before = renderConfig(example('prod-eu1'), defaultTemplates());
    // WHEN
    const after = renderConfig(
      variant('prod-eu1', (raw) => (raw.spec.tags = { ...raw.spec.tags, extra: 'tag' })),
      defaultTemplates(),
    );
    // THEN
    expect(after.checksum).toBe(before.checksum);
  });
});
