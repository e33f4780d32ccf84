import { WorkerStackSnapshot } from './assembly';

/**
 * Pairs removed and added clusters that are the same cluster under a new
 * name: same environment, and the same template and node config once both
 * names and the config checksums are blanked out. A heuristic: any other
 * difference, and the pair stays a removal plus an addition.
 */
export function detectRenames(
  removed: readonly WorkerStackSnapshot[],
  added: readonly WorkerStackSnapshot[],
): Array<{ from: string; to: string }> {
  const pairs: Array<{ from: string; to: string }> = [];
  const taken = new Set<string>();
  for (const old of removed) {
    const match = added.find((a) => {
      if (taken.has(a.cluster) || a.environment !== old.environment) return false;
      const names = [old.cluster, a.cluster];
      return fingerprint(old, names) === fingerprint(a, names);
    });
    if (match) {
      taken.add(match.cluster);
      pairs.push({ from: old.cluster, to: match.cluster });
    }
  }
  return pairs;
}

/** Template and config text with the given names and the stack's own config checksum blanked (longest name first). */
function fingerprint(s: WorkerStackSnapshot, names: readonly string[]): string {
  const blank = (text: string) => {
    let t = s.config ? text.split(s.config.checksum).join('\0checksum\0') : text;
    for (const n of [...names].sort((x, y) => y.length - x.length)) t = t.split(n).join('\0name\0');
    return t;
  };
  return `${blank(JSON.stringify(s.template))}\n${blank(s.config?.bytes.toString('utf8') ?? '')}`;
}
