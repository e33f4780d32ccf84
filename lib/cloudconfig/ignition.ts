import { canonicalJson } from './canonical-json';
import { NodeConfig } from './node-config';

/** Ignition spec version: the newest that Debian's Ignition 2.14 accepts as stable, and that Flatcar reads. */
export const IGNITION_VERSION = '3.3.0';

/** RFC 2397 data URL, percent-encoded so the config stays readable in a diff. */
export function dataUrl(text: string): string {
  return `data:,${encodeURIComponent(text)}`;
}

export function toIgnition(config: NodeConfig): string {
  const doc = {
    ignition: { version: IGNITION_VERSION },
    storage: {
      files: config.files.map((f) => ({ path: f.path, mode: f.mode, overwrite: true, contents: { source: dataUrl(f.contents) } })),
    },
    systemd: { units: config.units.map((u) => ({ name: u.name, enabled: u.enabled, contents: u.contents })) },
  };
  return canonicalJson(doc, 2) + '\n';
}
