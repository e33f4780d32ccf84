import * as zlib from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import { ConfigFormat, NodeConfig, NodeFile, NodeUnit, normalizeNodeConfig } from '../cloudconfig/node-config';

/** Where cloud-config puts systemd units (see lib/cloudconfig/cloud-init.ts). */
const UNIT_DIR = '/etc/systemd/system/';
const UNIT_NAME = /^[\w@.-]+\.(service|timer|path|socket|mount|target)$/;

/**
 * Reads a stored big config back into files and units, the form reviews
 * diff. The inverse of the Ignition and cloud-config serializers: Ignition
 * `storage.files` (data: URLs, percent-encoded or base64, optionally gzip) and
 * `systemd.units`; cloud-config `write_files`, where files under
 * /etc/systemd/system are units, enabled when `runcmd` enables them.
 * Throws on bytes that are neither.
 */
export function parseNodeConfig(bytes: Buffer, format: ConfigFormat): NodeConfig {
  const text = bytes.toString('utf8');
  return normalizeNodeConfig(format === 'ignition' ? fromIgnition(text) : fromCloudConfig(text));
}

function fromIgnition(text: string): NodeConfig {
  const doc = JSON.parse(text) as {
    storage?: { files?: Array<{ path: string; mode?: number; contents?: { source?: string; compression?: string } }> };
    systemd?: { units?: Array<{ name: string; enabled?: boolean; contents?: string }> };
  };
  const files: NodeFile[] = (doc.storage?.files ?? []).map((f) => ({
    path: f.path,
    mode: f.mode ?? 0o644,
    contents: f.contents?.source ? decodeDataUrl(f.contents.source, f.contents.compression) : '',
  }));
  const units: NodeUnit[] = (doc.systemd?.units ?? []).map((u) => ({ name: u.name, enabled: u.enabled ?? false, contents: u.contents ?? '' }));
  return { format: 'ignition', files, units };
}

/** RFC 2397: `data:[<mediatype>][;base64],<data>`. */
export function decodeDataUrl(url: string, compression?: string): string {
  const m = /^data:([^,]*),(.*)$/s.exec(url);
  if (!m) return `(not a data: URL, fetched by the node at boot: ${url})`;
  let bytes = m[1].split(';').includes('base64') ? Buffer.from(m[2], 'base64') : Buffer.from(decodeURIComponent(m[2]), 'utf8');
  if (compression === 'gzip') bytes = zlib.gunzipSync(bytes);
  return bytes.toString('utf8');
}

function fromCloudConfig(text: string): NodeConfig {
  const doc = (parseYaml(text) ?? {}) as {
    write_files?: Array<{ path: string; permissions?: string | number; content?: string; encoding?: string }>;
    runcmd?: Array<string | string[]>;
  };
  const enabled = new Set<string>();
  for (const cmd of doc.runcmd ?? []) {
    const argv = Array.isArray(cmd) ? cmd.map(String) : String(cmd).split(/\s+/);
    if (argv[0] === 'systemctl' && argv[1] === 'enable') argv.slice(2).filter((a) => !a.startsWith('-')).forEach((n) => enabled.add(n));
  }
  const files: NodeFile[] = [];
  const units: NodeUnit[] = [];
  for (const f of doc.write_files ?? []) {
    const contents = decodeContent(f.content ?? '', f.encoding);
    const name = f.path.startsWith(UNIT_DIR) ? f.path.slice(UNIT_DIR.length) : '';
    if (UNIT_NAME.test(name)) units.push({ name, enabled: enabled.has(name), contents });
    else files.push({ path: f.path, mode: parseMode(f.permissions), contents });
  }
  return { format: 'cloud-init', files, units };
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
