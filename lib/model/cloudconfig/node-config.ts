/**
 * The format-neutral node configuration: what files and systemd units a
 * worker gets. Templates render into it; the Ignition and cloud-init
 * serializers turn it into bytes; reviews diff it.
 */
/** Every node-config format's name; each has its module, registered in formats.ts. */
export const CONFIG_FORMATS = ['ignition', 'cloud-init', 'nodeadm', 'bottlerocket'] as const;
export type ConfigFormat = (typeof CONFIG_FORMATS)[number];

export interface NodeFile {
  /** Absolute path on the node. */
  readonly path: string;
  /** Unix permission bits, e.g. 0o644. */
  readonly mode: number;
  /** Full text of the file, LF line endings. */
  readonly contents: string;
}

export interface NodeUnit {
  /** systemd unit name, e.g. kubelet.service. */
  readonly name: string;
  /** Enabled at boot. */
  readonly enabled: boolean;
  /** Unit file text. */
  readonly contents: string;
}

export interface NodeConfig {
  readonly format: ConfigFormat;
  /** Sorted by path. */
  readonly files: readonly NodeFile[];
  /** Sorted by name. */
  readonly units: readonly NodeUnit[];
}

const byKey =
  <T>(key: (x: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;

/** Puts files and units in their canonical order, so list order in a template never changes bytes. */
export function normalizeNodeConfig(c: NodeConfig): NodeConfig {
  return {
    format: c.format,
    files: [...c.files].sort(byKey((f) => f.path)),
    units: [...c.units].sort(byKey((u) => u.name)),
  };
}
