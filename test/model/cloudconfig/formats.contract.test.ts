import { FORMATS, formatByExtension } from '../../../lib/model/cloudconfig/formats';
import { CONFIG_FORMATS, NodeConfig, normalizeNodeConfig } from '../../../lib/model/cloudconfig/node-config';
import { NODECONFIG_PATH } from '../../../lib/model/cloudconfig/nodeadm';
import { BOTTLEROCKET_SETTINGS_PATH } from '../../../lib/model/cloudconfig/bottlerocket';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

/** One contract, run against every registered node-config format. */

/** nodeadm's config is one NodeConfig document (lib/model/cloudconfig/nodeadm.ts), not files and units. */
const NODECONFIG_SAMPLE: NodeConfig = {
  format: 'nodeadm',
  files: [
    {
      path: NODECONFIG_PATH,
      mode: 0o600,
      // The cluster fields are ones the signal part can carry (eks-signal.ts); the text elsewhere is not ASCII.
      contents:
        'apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    apiServerEndpoint: https://example.com\n    name: sample\n  kubelet:\n    flags:\n      - --node-labels=a=ünïcode-100%\n',
    },
  ],
  units: [],
};

/** Bottlerocket's config is one TOML document of settings (lib/model/cloudconfig/bottlerocket.ts). */
const BOTTLEROCKET_SAMPLE: NodeConfig = {
  format: 'bottlerocket',
  files: [
    {
      path: BOTTLEROCKET_SETTINGS_PATH,
      mode: 0o600,
      contents:
        '[settings.kubernetes]\ncluster-name = "ünïcode-100%"\n\n[settings.kubernetes.node-labels]\n"a/b" = "c"\n',
    },
  ],
  units: [],
};

const SAMPLE = (format: NodeConfig['format']): NodeConfig =>
  format === 'nodeadm'
    ? NODECONFIG_SAMPLE
    : format === 'bottlerocket'
      ? BOTTLEROCKET_SAMPLE
      : normalizeNodeConfig({
          format,
          files: [
            { path: '/etc/kubernetes/kubelet.conf', mode: 0o600, contents: 'apiVersion: v1\nkind: Config\n' },
            {
              path: '/etc/sysctl.d/90-k8s.conf',
              mode: 0o644,
              contents: 'net.ipv4.ip_forward = 1\n# ünïcode, 100% "quoted" $VAR\n',
            },
          ],
          units: [
            { name: 'kubelet.service', enabled: true, contents: '[Service]\nExecStart=/usr/bin/kubelet\n' },
            { name: 'helper.timer', enabled: false, contents: '[Timer]\nOnBootSec=1min\n' },
          ],
        });

const CHECKSUM = 'a'.repeat(64);
const SOURCE = 's3://worker-stacks-config-111111111111-eu-west-1/clusters/x/aaaa.obj';
const SIGNAL = { region: 'eu-west-1', stackName: 'WorkerStack-x', logicalId: 'PoolGroupASG', timeoutSeconds: 540 };

describe.each(CONFIG_FORMATS)('node-config format %s', (name) => {
  const format = FORMATS[name];

  test('serialize is deterministic and parse is its inverse', () => {
    // GIVEN a node config; WHEN it is serialized twice and read back
    const config = SAMPLE(name);
    const text = format.serialize(config);

    // THEN the same text, and the same files and units (modes and enabled flags included)
    expect(format.serialize(SAMPLE(name))).toBe(text);
    expect(normalizeNodeConfig({ format: name, ...format.parse(text) })).toEqual(config);
  });

  test('its extension names it, and no other format', () => {
    expect(format.extension).toMatch(/^[a-z]+$/);
    expect(formatByExtension(format.extension)).toBe(name);
    expect(format.contentType).toMatch(/^[a-z]+\/[a-z.+-]+$/);
  });

  test('its user data names the object and its checksum, and holds nothing of the config unless it carries it whole', () => {
    // WHEN the user data is made for an object
    const config = format.serialize(SAMPLE(name));
    const text = format.userData({
      checksum: CHECKSUM,
      source: SOURCE,
      config,
      signal: SIGNAL,
      formatScripts: defaultTemplates(),
    });

    // THEN it points at the object with the checksum; a bootstrap-only one is small and holds nothing of the config,
    // one with a budget of its own (nodeadm: EC2's 16 KB) holds the stored bytes exactly
    expect(text).toContain(SOURCE);
    expect(text).toContain(CHECKSUM);
    if (format.userDataBudget === undefined) {
      expect(text).not.toContain('kubelet');
      expect(Buffer.byteLength(text)).toBeLessThan(2048);
    } else {
      expect(text).toContain(config);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(format.userDataBudget);
    }
  });

  test('bytes of another format are refused or read as nothing of this config', () => {
    // GIVEN the other formats' serializations of the same config
    for (const other of CONFIG_FORMATS.filter((f) => f !== name)) {
      const foreign = FORMATS[other].serialize(SAMPLE(other));
      // WHEN this format reads them, THEN it throws or finds none of the files (never a silent half-read)
      let parsed: ReturnType<typeof format.parse> | undefined;
      try {
        parsed = format.parse(foreign);
      } catch {
        parsed = undefined;
      }
      if (parsed) expect(parsed.files.map((f) => f.path)).not.toContain(SAMPLE(name).files[0].path);
    }
  });
});
