/**
 * Template errors are refused with a message that names the template, the
 * file and the problem: a value the cluster lacks (strict mode, never an
 * empty string), an unknown template name, a manifest with a bad field.
 * Each test changes a private copy of cloudconfig/.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WorkerCluster } from '../../../lib/model/cluster/schema/schema';
import { renderConfig } from '../../../lib/model/cloudconfig/render';
import { listTemplates, loadTemplate } from '../../../lib/model/cloudconfig/templates';
import { TemplateError } from '../../../lib/core/errors';
import { example, tempDir } from '../../helpers/clusters';
import { copyTemplates } from '../../fixtures/cloudconfig/boot';
import { DEFAULT_TEMPLATES_DIR, templateDirectory } from '../../../lib/platform/files/template-directory';

let dir: string;
beforeEach(() => {
  dir = copyTemplates(DEFAULT_TEMPLATES_DIR, tempDir('template-errors'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const edit = (rel: string, change: (text: string) => string) =>
  fs.writeFileSync(path.join(dir, rel), change(fs.readFileSync(path.join(dir, rel), 'utf8')));

/** What a call throws (it must throw). */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error, nothing was thrown');
}

const flatcar = (): WorkerCluster => example('prod-eu1');
const al2023 = (): WorkerCluster => example('staging-us1');

describe('a template uses only the values it declares: an undeclared one is an error naming the template file and line', () => {
  test('in a template file of the template', () => {
    // GIVEN a template file that uses values.nodeName, which flatcar-worker/values.yaml does not declare
    edit('flatcar-worker/bootstrap-token.sh.hbs', (t) => `${t}# node: {{values.nodeName}}\n`);
    const line =
      fs.readFileSync(path.join(dir, 'flatcar-worker/bootstrap-token.sh.hbs'), 'utf8').split('\n').length - 1;
    // WHEN
    const error = thrown(() => renderConfig(flatcar(), templateDirectory(dir)));
    // THEN
    expect(error).toBeInstanceOf(TemplateError);
    expect(error.message).toContain(
      `${path.basename(dir)}/flatcar-worker/bootstrap-token.sh.hbs:${line}: uses values.nodeName, which ${path.basename(dir)}/flatcar-worker/values.yaml does not declare`,
    );
    expect(error.message).toMatch(
      /fix: declare each in .*flatcar-worker\/values\.yaml \(name, type, description, required or default\)/,
    );
  });

  test('in a partial, through the file that includes it', () => {
    // GIVEN
    edit('_shared/bootstrap-kubeconfig.hbs', (t) =>
      t.replace('server: {{values.apiEndpoint}}', 'server: {{values.apiServer}}'),
    );
    // WHEN
    const error = thrown(() => renderConfig(al2023(), templateDirectory(dir)));
    // THEN
    expect(error).toBeInstanceOf(TemplateError);
    expect(error.message).toMatch(
      /_shared\/bootstrap-kubeconfig\.hbs:\d+: uses values\.apiServer, which .*al2023-worker\/values\.yaml does not declare/,
    );
  });

  test('a nested name under an undeclared value', () => {
    // GIVEN
    edit('_shared/kubelet-config.yaml.hbs', (t) => t.replace('{{values.clusterDNS}}', '{{values.dns.clusterIP}}'));
    // WHEN
    const error = thrown(() => renderConfig(flatcar(), templateDirectory(dir)));
    // THEN
    expect(error).toBeInstanceOf(TemplateError);
    expect(error.message).toMatch(/_shared\/kubelet-config\.yaml\.hbs:\d+: uses values\.dns, which/);
  });
});

describe('strict mode: a value the cluster lacks is an error, never an empty string', () => {
  test('a declared value without a default that the object leaves out', () => {
    // GIVEN flatcar-worker declares nodeName (optional, no default) and a template file uses it
    edit(
      'flatcar-worker/values.yaml',
      (t) => `${t}  - { name: nodeName, type: string, pattern: "[a-z0-9.-]{1,63}", description: a name }\n`,
    );
    edit('flatcar-worker/bootstrap-token.sh.hbs', (t) => `${t}# node: {{values.nodeName}}\n`);
    // WHEN
    const error = thrown(() => renderConfig(flatcar(), templateDirectory(dir)));
    // THEN
    expect(error).toBeInstanceOf(TemplateError);
    expect(error.message).toMatch(
      /^template flatcar-worker: \/opt\/bin\/worker-stacks-bootstrap-token \(from bootstrap-token\.sh\.hbs\): "nodeName" not defined/,
    );
    expect(error.message).toMatch(/fix: .*spec\.cloudConfig\.values/);
  });

  test('in a shared file used by a unit', () => {
    // GIVEN
    edit('_shared/kubelet.service.hbs', (t) =>
      t.replace('RestartSec=5', 'RestartSec={{rollingUpdate.restartSeconds}}'),
    );
    // WHEN
    const error = thrown(() => renderConfig(al2023(), templateDirectory(dir)));
    // THEN
    expect(error).toBeInstanceOf(TemplateError);
    expect(error.message).toMatch(
      /^template al2023-worker: kubelet\.service \(from \.\.\/_shared\/kubelet\.service\.hbs\): "restartSeconds" not defined/,
    );
  });

  test('a value the cluster has renders (the same edit with an existing name)', () => {
    // GIVEN
    edit('flatcar-worker/bootstrap-token.sh.hbs', (t) => `${t}# cluster: {{cluster.name}}\n`);
    // WHEN
    const config = renderConfig(flatcar(), templateDirectory(dir));
    // THEN
    expect(
      config.node.files
        .find((f) => f.path === '/opt/bin/worker-stacks-bootstrap-token')!
        .contents.endsWith('# cluster: prod-eu1\n'),
    ).toBe(true);
  });
});

describe('unknown template names', () => {
  test('renderConfig names the unknown template and lists the known ones', () => {
    // GIVEN
    const c = flatcar();
    const cluster: WorkerCluster = {
      ...c,
      spec: { ...c.spec, cloudConfig: { ...c.spec.cloudConfig, template: 'flatcar-wroker' } },
    };
    // WHEN
    const error = thrown(() => renderConfig(cluster, templateDirectory(dir)));
    // THEN
    expect(error).toBeInstanceOf(TemplateError);
    expect(error.message).toContain('unknown cloud-config template "flatcar-wroker"');
    expect(error.message).toContain(`fix: use one of: ${[...listTemplates(templateDirectory(dir))].sort().join(', ')}`);
    expect(error.message).toContain('al2023-worker, eks-al2023, eks-bottlerocket, flatcar-worker');
  });

  test('the shared directory is not a template', () => {
    // GIVEN
    const name = '_shared';
    // WHEN
    const error = thrown(() => loadTemplate(name, templateDirectory(dir)));
    // THEN
    expect(error).toBeInstanceOf(TemplateError);
    expect(error.message).toContain('unknown cloud-config template "_shared"');
    expect([...listTemplates(templateDirectory(dir))].sort()).toEqual([
      'al2023-worker',
      'eks-al2023',
      'eks-bottlerocket',
      'flatcar-worker',
    ]);
  });
});

describe('a bad manifest is refused, naming the manifest file and the field', () => {
  const manifest = () => path.join(dir, 'flatcar-worker', 'template.yaml');

  test.each([
    ['a mode that is not octal', (t: string) => t.replace('mode: "0755"', 'mode: "755"'), /files\.\d+\.mode: /],
    [
      'an unknown field',
      (t: string) => t.replace('description:', 'owner: root\ndescription:'),
      /template\.yaml: Unrecognized key: "owner"/,
    ],
    [
      'a relative file path',
      (t: string) => t.replace('path: /etc/kubernetes/pki/ca.crt', 'path: etc/kubernetes/pki/ca.crt'),
      /files\.0\.path: /,
    ],
    ['an unknown format', (t: string) => t.replace('format: ignition', 'format: butane'), /format: /],
    [
      'a unit name without a unit suffix',
      (t: string) => t.replace('name: kubelet.service', 'name: kubelet'),
      /units\.2\.name: /,
    ],
  ])('%s', (_what, change, field) => {
    // GIVEN
    edit('flatcar-worker/template.yaml', change);
    // WHEN
    const error = thrown(() => renderConfig(flatcar(), templateDirectory(dir)));
    // THEN
    expect(error).toBeInstanceOf(TemplateError);
    expect(error.message).toContain('invalid template manifest');
    expect(error.message).toContain(`${manifest()}: `);
    expect(error.message).toMatch(field);
  });

  test('a template file that does not exist', () => {
    // GIVEN
    fs.rmSync(path.join(dir, '_shared', 'sysctl.conf.hbs'));
    // WHEN
    const error = thrown(() => renderConfig(flatcar(), templateDirectory(dir)));
    // THEN
    expect(error).toBeInstanceOf(TemplateError);
    expect(error.message).toContain(`${manifest()}: template file ../_shared/sysctl.conf.hbs does not exist`);
  });

  test('a template file outside the template directory', () => {
    // GIVEN
    edit('flatcar-worker/template.yaml', (t) =>
      t.replace('template: ../_shared/sysctl.conf.hbs', 'template: ../../../etc/hostname'),
    );
    // WHEN
    const error = thrown(() => renderConfig(flatcar(), templateDirectory(dir)));
    // THEN
    expect(error).toBeInstanceOf(TemplateError);
    expect(error.message).toContain(`${manifest()}: template ../../../etc/hostname is outside ${dir}`);
  });
});
