import { stringify } from 'yaml';
import { NodeConfig } from './node-config';

export const CLOUD_CONFIG_HEADER = '#cloud-config\n';

/**
 * The big config as cloud-config. Files are written late (`defer: true`, in
 * the final stage) because the bootstrap installs this document only during
 * the init stage; units are files under /etc/systemd/system, then enabled.
 */
export function toCloudConfig(config: NodeConfig): string {
  const unitFiles = config.units.map((u) => ({ path: `/etc/systemd/system/${u.name}`, mode: 0o644, contents: u.contents }));
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
    runcmd: [['systemctl', 'daemon-reload'], ...(enabled.length ? [['systemctl', 'enable', '--now', '--no-block', ...enabled]] : [])],
  };
  return CLOUD_CONFIG_HEADER + stringify(doc, { lineWidth: 0, sortMapEntries: true, blockQuote: 'literal' });
}
