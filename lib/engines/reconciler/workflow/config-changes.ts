import { sha256Hex } from '../../../model/cloudconfig/checksum';
import { NodeConfig } from '../../../model/cloudconfig/node-config';

/** Short digests of each file and unit of a node config: enough to say later what changed. */
export function configDigests(node: NodeConfig): Readonly<Record<string, string>> {
  // A rendered config is kept while its inputs stay the same, and a cluster waiting for its wave asks again each look.
  let known = digests.get(node);
  if (!known) digests.set(node, (known = Object.freeze(computeDigests(node))));
  return known;
}

/** Digests by rendered node config (see configDigests). */
const digests = new WeakMap<NodeConfig, Readonly<Record<string, string>>>();

function computeDigests(node: NodeConfig): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of node.files) out[f.path] = sha256Hex(`${f.mode}\n${f.contents}`).slice(0, 12);
  for (const u of node.units) out[`unit:${u.name}`] = sha256Hex(`${u.enabled}\n${u.contents}`).slice(0, 12);
  return out;
}

export interface ConfigChanges {
  readonly added: string[];
  readonly removed: string[];
  readonly changed: string[];
}

export function configChanges(
  before: Record<string, string> | undefined,
  after: Record<string, string>,
): ConfigChanges {
  const b = before ?? {};
  const keys = (o: Record<string, string>) => Object.keys(o).sort();
  return {
    added: keys(after).filter((k) => !(k in b)),
    removed: keys(b).filter((k) => !(k in after)),
    changed: keys(after).filter((k) => k in b && b[k] !== after[k]),
  };
}

/** "changed /var/lib/kubelet/config.yaml, unit kubelet.service; added /etc/x" — for the status message and the log. */
export function describeConfigChanges(c: ConfigChanges): string {
  const name = (k: string) => (k.startsWith('unit:') ? `unit ${k.slice(5)}` : k);
  const parts = [
    c.changed.length ? `changed ${c.changed.map(name).join(', ')}` : '',
    c.added.length ? `added ${c.added.map(name).join(', ')}` : '',
    c.removed.length ? `removed ${c.removed.map(name).join(', ')}` : '',
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : 'no file or unit changed';
}
