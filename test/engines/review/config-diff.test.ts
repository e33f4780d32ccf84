import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { sha256Hex } from '../../../lib/model/cloudconfig/checksum';
import { toCloudConfig } from '../../../lib/model/cloudconfig/cloud-init';
import { toIgnition } from '../../../lib/model/cloudconfig/ignition';
import { ConfigFormat, NodeConfig } from '../../../lib/model/cloudconfig/node-config';
import { renderConfig } from '../../../lib/model/cloudconfig/render';
import { ConfigAsset } from '../../../lib/engines/review/assembly';
import { diffConfigs } from '../../../lib/engines/review/config-diff';
import { MASK, maskSecrets } from '../../../lib/engines/review/mask';
import { parseNodeConfig } from '../../../lib/engines/review/parse-config';
import { unifiedDiff } from '../../../lib/engines/review/unified-diff';
import { BOOTSTRAP_EXAMPLES, CONFIG_IN_USER_DATA_EXAMPLES, example, tempDir } from '../../helpers/clusters';
import { run } from '../../helpers/tools';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

/** A config object as the cloud assembly holds it, serialized by the project's own serializers. */
function asset(node: NodeConfig): ConfigAsset {
  const bytes = Buffer.from(node.format === 'ignition' ? toIgnition(node) : toCloudConfig(node));
  return { checksum: sha256Hex(bytes), format: node.format, bytes };
}

function node(format: ConfigFormat, files: Record<string, string>, units: Record<string, string> = {}): NodeConfig {
  return {
    format,
    files: Object.keys(files)
      .sort()
      .map((p) => ({ path: p, mode: 0o644, contents: files[p] })),
    units: Object.keys(units)
      .sort()
      .map((name) => ({ name, enabled: true, contents: units[name] })),
  };
}

test.each(BOOTSTRAP_EXAMPLES)(
  'the stored config of %s reads back into exactly the files and units it was rendered from',
  (name) => {
    // GIVEN
    const rendered = renderConfig(example(name), defaultTemplates());
    // WHEN
    const parsed = parseNodeConfig(rendered.bytes, rendered.format);
    // THEN
    expect(parsed).toEqual(rendered.node);
    expect(parsed.files.length + parsed.units.length).toBeGreaterThan(5);
  },
);

test.each(CONFIG_IN_USER_DATA_EXAMPLES)(
  'the stored config of %s (one document, stored canonically) reads back as that document, byte for byte',
  (name) => {
    // GIVEN the NodeConfig or TOML as stored (canonical: keys sorted, quoting normalized, so not the rendered text)
    const rendered = renderConfig(example(name), defaultTemplates());
    // WHEN
    const parsed = parseNodeConfig(rendered.bytes, rendered.format);
    // THEN the one file the review diffs is exactly the stored bytes
    expect(parsed.units).toEqual([]);
    expect(parsed.files.map((f) => f.contents)).toEqual([rendered.bytes.toString('utf8')]);
  },
);

test('an Ignition file given as a gzipped base64 data URL reads back as its text', () => {
  // GIVEN
  const text = 'maxPods: 120\n';
  const source = `data:;base64,${zlib.gzipSync(text).toString('base64')}`;
  const doc = {
    ignition: { version: '3.3.0' },
    storage: { files: [{ path: '/etc/x', mode: 0o600, contents: { source, compression: 'gzip' } }] },
  };
  // WHEN
  const parsed = parseNodeConfig(Buffer.from(JSON.stringify(doc)), 'ignition');
  // THEN
  expect(parsed.files).toEqual([{ path: '/etc/x', mode: 0o600, contents: text }]);
});

test.each(['ignition', 'cloud-init'] as const)(
  '%s: values under secret-named keys never reach the diff, references to them do',
  (format) => {
    // GIVEN
    const base = node(format, {
      '/etc/app.yaml': 'url: https://x\npassword: hunter2\ntoken: $token\n',
      '/etc/app.json': '{ "client_secret": "s3cr3t-1", "port": 1 }\n',
    });
    const head = node(format, {
      '/etc/app.yaml': 'url: https://y\npassword: correct-horse\ntoken: $token\n',
      '/etc/app.json': '{ "client_secret": "s3cr3t-2", "port": 1 }\n',
    });
    // WHEN
    const diff = diffConfigs(asset(base), asset(head));
    const text = JSON.stringify(diff);
    // THEN
    for (const secret of ['hunter2', 'correct-horse', 's3cr3t-1', 's3cr3t-2']) expect(text).not.toContain(secret);
    const yaml = diff.entries.find((e) => e.name === '/etc/app.yaml')!;
    expect(yaml.lines).toEqual(
      expect.arrayContaining(['-url: https://x', '+url: https://y', ` password: ${MASK}`, ' token: $token']),
    );
    const json = diff.entries.find((e) => e.name === '/etc/app.json')!;
    expect(json.notes).toContain('only masked values changed');
    expect(json.lines).toEqual([]);
  },
);

test('masking: YAML block values and PEM private keys are masked, certificates and non-secret keys are not', () => {
  // GIVEN
  const text = [
    'privateKey: |',
    '  line-one',
    '  line-two',
    'after: 1',
    '-----BEGIN EC PRIVATE KEY-----',
    'MHcCAQEEIKEY',
    '-----END EC PRIVATE KEY-----',
    '-----BEGIN CERTIFICATE-----',
    'MIIBCERT',
    '-----END CERTIFICATE-----',
    'secretArn: arn:aws:secretsmanager:eu-west-1:1:secret:x',
    'AWS_SECRET_ACCESS_KEY=abc123',
  ].join('\n');
  // WHEN
  const masked = maskSecrets(text);
  // THEN
  expect(masked).not.toMatch(/line-one|line-two|MHcCAQEEIKEY|abc123/);
  expect(masked).toContain('after: 1');
  expect(masked).toContain('MIIBCERT');
  expect(masked).toContain('secretArn: arn:aws:secretsmanager');
});

test('files and units added, removed, re-moded and re-enabled are each named; long contents are summarised', () => {
  // GIVEN
  const long = Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n') + '\n';
  const base = node('ignition', { '/etc/a': 'one\n', '/etc/gone': 'bye\n' }, { 'x.service': '[Unit]\n' });
  const head: NodeConfig = {
    ...node('ignition', { '/etc/a': 'one\n', '/etc/long': long }, { 'x.service': '[Unit]\n' }),
  };
  const headModes: NodeConfig = {
    ...head,
    files: head.files.map((f) => (f.path === '/etc/a' ? { ...f, mode: 0o755 } : f)),
    units: [{ name: 'x.service', enabled: false, contents: '[Unit]\n' }],
  };
  // WHEN
  const diff = diffConfigs(asset(base), asset(headModes), { maxLines: 10 });
  // THEN
  expect(diff.entries.map((e) => [e.kind, e.name, e.change, e.notes])).toEqual([
    ['file', '/etc/a', 'modified', ['mode 0644 -> 0755']],
    ['file', '/etc/gone', 'removed', []],
    ['file', '/etc/long', 'added', ['mode 0644']],
    ['unit', 'x.service', 'modified', ['enabled true -> false']],
  ]);
  const added = diff.entries.find((e) => e.name === '/etc/long')!;
  expect(added.lines.slice(0, 3)).toEqual(['--- /dev/null', '+++ b/etc/long', '@@ -0,0 +1,200 @@']);
  expect(added.lines).toHaveLength(12);
  expect(added.omittedLines).toBe(191);
  expect(diff.entries.find((e) => e.name === '/etc/gone')!.lines).toEqual([
    '--- a/etc/gone',
    '+++ /dev/null',
    '@@ -1 +0,0 @@',
    '-bye',
  ]);
});

test('equal checksums: no config diff at all', () => {
  // GIVEN
  const a = asset(node('cloud-init', { '/etc/a': 'x\n' }));
  // THEN
  expect(diffConfigs(a, a).entries).toEqual([]);
});

test('the unified diff is one that git apply accepts and that turns base into head', () => {
  // GIVEN: random edits of random texts, with and without a final newline
  const dir = tempDir('unified');
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let t = 0; t < 40; t++) {
    const a = Array.from({ length: rand(25) }, () => `l${rand(5)}`);
    const b = a.filter(() => rand(5) > 0).flatMap((l) => (rand(6) === 0 ? [l, `n${rand(3)}`] : [l]));
    const A = a.join('\n') + (a.length && rand(8) ? '\n' : '');
    const B = ['x', ...b].slice(rand(2)).join('\n') + (rand(8) ? '\n' : '');
    fs.writeFileSync(path.join(dir, 'f'), A);
    // WHEN
    const patch = unifiedDiff(A, B, { oldName: 'a/f', newName: 'b/f' });
    fs.writeFileSync(path.join(dir, 'p.diff'), patch.join('\n') + '\n');
    const r = A === B ? { status: 0, stderr: '' } : run('git', ['apply', '--unidiff-zero', 'p.diff'], { cwd: dir });
    // THEN
    expect(r.stderr).toBe('');
    expect(fs.readFileSync(path.join(dir, 'f'), 'utf8')).toBe(B);
  }
  fs.rmSync(dir, { recursive: true, force: true });
});
