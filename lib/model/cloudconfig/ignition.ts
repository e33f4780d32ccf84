import * as zlib from 'node:zlib';
import { canonicalJson } from './canonical-json';
import { BootstrapProps, NodeConfigFormat } from './format';
import { NodeConfig, NodeFile, NodeUnit } from './node-config';

/** Ignition spec version: the newest that Debian's Ignition 2.14 accepts as stable, and that Flatcar reads. */
export const IGNITION_VERSION = '3.3.0';

/** RFC 2397 data URL, percent-encoded so the config stays readable in a diff. */
export function dataUrl(text: string): string {
  return `data:,${encodeURIComponent(text)}`;
}

/** @internal production reaches it through FORMATS; exported for its tests */
export function toIgnition(config: NodeConfig): string {
  const doc = {
    ignition: { version: IGNITION_VERSION },
    storage: {
      files: config.files.map((f) => ({
        path: f.path,
        mode: f.mode,
        overwrite: true,
        contents: { source: dataUrl(f.contents) },
      })),
    },
    systemd: { units: config.units.map((u) => ({ name: u.name, enabled: u.enabled, contents: u.contents })) },
  };
  return canonicalJson(doc, 2) + '\n';
}

/** Ignition `storage.files` (data: URLs, percent-encoded or base64, optionally gzip) and `systemd.units`. */
export function fromIgnition(text: string): Omit<NodeConfig, 'format'> {
  const doc = JSON.parse(text) as {
    storage?: { files?: Array<{ path: string; mode?: number; contents?: { source?: string; compression?: string } }> };
    systemd?: { units?: Array<{ name: string; enabled?: boolean; contents?: string }> };
  };
  const files: NodeFile[] = (doc.storage?.files ?? []).map((f) => ({
    path: f.path,
    mode: f.mode ?? 0o644,
    contents: f.contents?.source ? decodeDataUrl(f.contents.source, f.contents.compression) : '',
  }));
  const units: NodeUnit[] = (doc.systemd?.units ?? []).map((u) => ({
    name: u.name,
    enabled: u.enabled ?? false,
    contents: u.contents ?? '',
  }));
  return { files, units };
}

/** RFC 2397: `data:[<mediatype>][;base64],<data>`. */
export function decodeDataUrl(url: string, compression?: string): string {
  const m = /^data:([^,]*),(.*)$/s.exec(url);
  if (!m) return `(not a data: URL, fetched by the node at boot: ${url})`;
  let bytes = m[1].split(';').includes('base64')
    ? Buffer.from(m[2], 'base64')
    : Buffer.from(decodeURIComponent(m[2]), 'utf8');
  if (compression === 'gzip') bytes = zlib.gunzipSync(bytes);
  return bytes.toString('utf8');
}

/** Ignition fetches s3:// with the instance role and refuses a hash mismatch before applying anything. */
export function ignitionUserData({ checksum, source }: BootstrapProps): string {
  return canonicalJson({
    ignition: {
      version: IGNITION_VERSION,
      config: { replace: { source, verification: { hash: `sha256-${checksum}` } } },
    },
  });
}

/** Flatcar Container Linux. */
export const IGNITION: NodeConfigFormat = {
  extension: 'ign',
  contentType: 'application/json',
  serialize: toIgnition,
  parse: fromIgnition,
  userData: ignitionUserData,
  imageFamilies: ['flatcar'],
};
