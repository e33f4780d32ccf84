/**
 * eks-al2023's containerdConfig takes TOML of many lines (a value declared multiline: newlines allowed, no other
 * control character), written into the NodeConfig as a YAML block that keeps the MIME user data intact, and checked
 * as TOML before it reaches a node (rule nodeconfig/containerd-toml). Every other value still refuses a newline.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { derive } from '../../../lib/model/cluster/derive';
import { MIME_BOUNDARY, NODECONFIG_MEDIA_TYPE } from '../../../lib/model/cloudconfig/nodeadm';
import { configUserData } from '../../../lib/model/cloudconfig/user-data';
import { REPO, TEMPLATES, tempDir } from '../../helpers/clusters';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

const FILE = 'clusters/eks-eu1.yaml';
const TOML =
  '[plugins."io.containerd.grpc.v1.cri".registry]\nconfig_path = "/etc/containerd/certs.d"\n\n[debug]\nlevel = "info"\n';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects are reshaped freely, into invalid forms too
function deriveWith(values: Record<string, any>) {
  const raw = parse(fs.readFileSync(path.join(REPO, 'test', 'fixtures', 'eks', 'eks-eu1.yaml'), 'utf8'));
  Object.assign(raw.spec.cloudConfig.values, values);
  return derive(raw, { file: FILE, templateSource: defaultTemplates(), templates: TEMPLATES });
}

test('TOML of many lines is accepted, stored as written, and the user data still carries exactly the stored bytes', () => {
  // WHEN
  const d = deriveWith({ containerdConfig: TOML });
  // THEN
  expect(d.problems).toBeUndefined();
  const config = d.configs!.get('default')!;
  const text = config.bytes.toString('utf8');
  expect(parse(text).spec.containerd.config).toBe(TOML);
  const userData = configUserData(config, 's3://b/k', defaultTemplates());
  // no line of the TOML can pose as a MIME delimiter: the YAML block indents it
  expect(userData.split('\n').filter((l) => l.startsWith(`--${MIME_BOUNDARY}`))).toHaveLength(4);
  // and the node's check (Python's email package, as nodeadm's Go mime/multipart) reads the part as the stored bytes
  const dir = tempDir('containerd-');
  fs.writeFileSync(path.join(dir, 'ud'), userData);
  fs.writeFileSync(path.join(dir, 'nc'), config.bytes);
  const r = spawnSync('python3', [
    '-c',
    `import email,sys; m=email.message_from_binary_file(open(sys.argv[1],"rb")); p=[x.get_payload(decode=True) for x in m.walk() if x.get_content_type()=="${NODECONFIG_MEDIA_TYPE}"]; sys.exit(p!=[open(sys.argv[2],"rb").read()])`,
    path.join(dir, 'ud'),
    path.join(dir, 'nc'),
  ]);
  expect(r.status).toBe(0);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('text that is not TOML is refused at containerdConfig, naming the rule', () => {
  // WHEN
  const d = deriveWith({ containerdConfig: '[plugins\nversion = 2\n' });
  // THEN
  const p = d.problems?.find((x) => x.path === 'spec.cloudConfig.values.containerdConfig');
  expect(p?.file).toBe(FILE);
  expect(p?.message).toMatch(/spec\.containerd\.config is not TOML: .*\(rule nodeconfig\/containerd-toml\)$/);
});

test.each([
  [
    'a tab in containerdConfig',
    { containerdConfig: 'version = 2\n\tx = 1\n' },
    'spec.cloudConfig.values.containerdConfig',
  ],
  [
    'a newline in a value not declared multiline',
    { kubeletFlags: ['--v=2\n--node-ip=1.2.3.4'] },
    'spec.cloudConfig.values.kubeletFlags',
  ],
])('%s is refused as a control character', (_what, values, field) => {
  // WHEN
  const d = deriveWith(values);
  // THEN
  expect(d.stage).toBe('validate');
  expect(d.problems).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ path: field, message: expect.stringContaining('has a control character') }),
    ]),
  );
});
