import * as zlib from 'node:zlib';
import { parse as parseYaml, stringify } from 'yaml';
import { BootstrapProps, NodeConfigFormat } from './format';
import { NodeConfig, NodeFile, NodeUnit } from './node-config';

export const CLOUD_CONFIG_HEADER = '#cloud-config\n';

/** Where the cloud-init bootstrap installs the verified config, so that later cloud-init stages apply it. @internal exported for the user-data tests */
export const CLOUD_INIT_INSTALL_PATH = '/etc/cloud/cloud.cfg.d/99-worker-stacks.cfg';

/** Where cloud-config puts systemd units. */
const UNIT_DIR = '/etc/systemd/system/';
const UNIT_NAME = /^[\w@.-]+\.(service|timer|path|socket|mount|target)$/;

/**
 * The big config as cloud-config. Files are written late (`defer: true`, in
 * the final stage) because the bootstrap installs this document only during
 * the init stage; units are files under /etc/systemd/system, then enabled.
 * @internal production reaches it through FORMATS; exported for its tests
 */
export function toCloudConfig(config: NodeConfig): string {
  const unitFiles = config.units.map((u) => ({ path: `${UNIT_DIR}${u.name}`, mode: 0o644, contents: u.contents }));
  const files = [...config.files, ...unitFiles].sort((a, b) => (a.path < b.path ? -1 : 1));
  const enabled = config.units.filter((u) => u.enabled).map((u) => u.name);
  const doc = {
    write_files: files.map((f) => ({
      path: f.path,
      permissions: `0${f.mode.toString(8)}`,
      owner: 'root:root',
      content: f.contents,
      defer: true,
    })),
    runcmd: [
      ['systemctl', 'daemon-reload'],
      ...(enabled.length ? [['systemctl', 'enable', '--now', '--no-block', ...enabled]] : []),
    ],
  };
  return CLOUD_CONFIG_HEADER + stringify(doc, { lineWidth: 0, sortMapEntries: true, blockQuote: 'literal' });
}

/** cloud-config `write_files`, where files under /etc/systemd/system are units, enabled when `runcmd` enables them. */
export function fromCloudConfig(text: string): Omit<NodeConfig, 'format'> {
  const doc = (parseYaml(text) ?? {}) as {
    write_files?: Array<{ path: string; permissions?: string | number; content?: string; encoding?: string }>;
    runcmd?: unknown[];
  };
  const enabled = new Set<string>();
  for (const cmd of doc.runcmd ?? []) {
    // A command is a list of arguments or one line; any other scalar enables nothing.
    const argv = Array.isArray(cmd) ? cmd.map(String) : typeof cmd === 'string' ? cmd.split(/\s+/) : [];
    if (argv[0] === 'systemctl' && argv[1] === 'enable')
      argv
        .slice(2)
        .filter((a) => !a.startsWith('-'))
        .forEach((n) => enabled.add(n));
  }
  const files: NodeFile[] = [];
  const units: NodeUnit[] = [];
  for (const f of doc.write_files ?? []) {
    const contents = decodeContent(f.content ?? '', f.encoding);
    const name = f.path.startsWith(UNIT_DIR) ? f.path.slice(UNIT_DIR.length) : '';
    if (UNIT_NAME.test(name)) units.push({ name, enabled: enabled.has(name), contents });
    else files.push({ path: f.path, mode: parseMode(f.permissions), contents });
  }
  return { files, units };
}

function decodeContent(content: string, encoding?: string): string {
  const e = (encoding ?? '').toLowerCase();
  if (!e || e === 'text/plain') return content;
  let bytes = Buffer.from(content, e.includes('b64') || e.includes('base64') ? 'base64' : 'utf8');
  if (e.includes('gz')) bytes = zlib.gunzipSync(bytes);
  return bytes.toString('utf8');
}

function parseMode(p: string | number | undefined): number {
  if (p === undefined) return 0o644;
  // YAML may have read an unquoted 0644 as a number (decimal 644 in the core schema).
  return typeof p === 'number' ? parseInt(String(p), 8) : parseInt(p, 8);
}

/**
 * bootcmd runs in the init stage, every boot: fetch, verify with sha256sum -c, and only then install the document
 * where the config and final stages read it. On a mismatch nothing is installed: the node never joins the cluster,
 * and a rolling update that waits on signals fails and rolls back (fail closed).
 */
export function cloudInitUserData({ checksum, source }: BootstrapProps): string {
  const fetch = source.startsWith('s3://')
    ? `aws s3 cp --only-show-errors '${source}' "$tmp"`
    : `curl -fsS -o "$tmp" '${source}'`;
  const script = [
    'set -eu',
    `want=${checksum}`,
    `dst=${CLOUD_INIT_INSTALL_PATH}`,
    'if [ -f "$dst" ] && echo "$want  $dst" | sha256sum -c --status -; then exit 0; fi',
    'tmp=$(mktemp)',
    'trap \'rm -f "$tmp"\' EXIT',
    fetch,
    'if ! echo "$want  $tmp" | sha256sum -c --status -; then echo "worker-stacks: node config checksum mismatch, refusing it" >&2; exit 1; fi',
    'chmod 0600 "$tmp"',
    'mv "$tmp" "$dst"',
  ].join('\n');
  return `${CLOUD_CONFIG_HEADER}# worker-stacks bootstrap; node config sha256 ${checksum}\nbootcmd:\n  - - sh\n    - -c\n    - |\n${indent(script, 6)}\n`;
}

function indent(text: string, n: number): string {
  return text
    .split('\n')
    .map((l) => ' '.repeat(n) + l)
    .join('\n');
}

/** Amazon Linux, Ubuntu: anything that runs cloud-init. */
export const CLOUD_INIT: NodeConfigFormat = {
  extension: 'yaml',
  contentType: 'text/yaml',
  serialize: toCloudConfig,
  parse: fromCloudConfig,
  userData: cloudInitUserData,
  imageFamilies: ['al2023', 'ubuntu', 'eks-al2023'],
};
