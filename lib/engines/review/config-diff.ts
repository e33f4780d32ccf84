import { sha256Hex } from '../../model/cloudconfig/checksum';
import { NodeConfig } from '../../model/cloudconfig/node-config';
import { ConfigAsset } from './assembly';
import { maskSecrets } from './mask';
import { parseNodeConfig } from './parse-config';
import { unifiedDiff } from './unified-diff';

/** One file or unit of the big config that differs between base and head. */
export interface ConfigEntryDiff {
  /** `document` only when a config could not be read back into files and units (then the whole text is diffed). */
  readonly kind: 'file' | 'unit' | 'document';
  /** The file's path, or the unit's name. */
  readonly name: string;
  readonly change: 'added' | 'removed' | 'modified';
  /** Changes besides the text: `mode 0644 -> 0755`, `enabled false -> true`, `only masked values changed`. */
  readonly notes: readonly string[];
  /** Unified diff lines (`--- a/...`, `+++ b/...`, `@@ ... @@`, ` `/`-`/`+` lines), secrets masked, long ones cut. */
  readonly lines: readonly string[];
  /** Diff lines left out to keep the review short (0 when all are shown). */
  readonly omittedLines: number;
}

export interface ConfigDiff {
  readonly baseChecksum: string | null;
  readonly headChecksum: string | null;
  readonly baseFormat: string | null;
  readonly headFormat: string | null;
  /** Files first (by path), then units (by name). Empty when the checksums are equal. */
  readonly entries: readonly ConfigEntryDiff[];
}

export interface ConfigDiffOptions {
  /** Diff lines shown per file or unit; the rest are counted. @default 60 */
  readonly maxLines?: number;
  /** Context lines around a change. @default 3 */
  readonly context?: number;
}

const UNIT_DIR = '/etc/systemd/system/';

/**
 * What changed in the big config between base and head, file by file and
 * unit by unit, as text. Values under secret-named keys are masked before
 * the diff, so no secret ever reaches a review.
 */
export function diffConfigs(
  base: ConfigAsset | undefined,
  head: ConfigAsset | undefined,
  opts: ConfigDiffOptions = {},
): ConfigDiff {
  const result = (entries: ConfigEntryDiff[]): ConfigDiff => ({
    baseChecksum: base?.checksum ?? null,
    headChecksum: head?.checksum ?? null,
    baseFormat: base?.format ?? null,
    headFormat: head?.format ?? null,
    entries,
  });
  if (base?.checksum === head?.checksum) return result([]);
  const a = readBack(base);
  const b = readBack(head);
  if (a === null || b === null) {
    // Not a config we can read back into files and units: diff the documents as text.
    return result(
      entryDiff(
        'document',
        'node config',
        base?.bytes.toString('utf8'),
        head?.bytes.toString('utf8'),
        opts,
        [],
        '/node-config',
      ),
    );
  }
  const entries: ConfigEntryDiff[] = [];
  const files = byKey(a.files, b.files, (f) => f.path);
  for (const [path, [x, y]] of files) {
    const notes =
      x && y && x.mode !== y.mode
        ? [`mode ${octal(x.mode)} -> ${octal(y.mode)}`]
        : !x && y
          ? [`mode ${octal(y.mode)}`]
          : [];
    entries.push(...entryDiff('file', path, x?.contents, y?.contents, opts, notes, path));
  }
  for (const [name, [x, y]] of byKey(a.units, b.units, (u) => u.name)) {
    const notes =
      x && y && x.enabled !== y.enabled
        ? [`enabled ${x.enabled} -> ${y.enabled}`]
        : !x && y
          ? [y.enabled ? 'enabled' : 'not enabled']
          : [];
    entries.push(...entryDiff('unit', name, x?.contents, y?.contents, opts, notes, `${UNIT_DIR}${name}`));
  }
  return result(entries);
}

function readBack(asset: ConfigAsset | undefined): NodeConfig | null {
  if (!asset) return { format: 'ignition', files: [], units: [] };
  try {
    return parseNodeConfig(asset.bytes, asset.format);
  } catch {
    return null;
  }
}

function byKey<T>(
  xs: readonly T[],
  ys: readonly T[],
  key: (t: T) => string,
): Map<string, [T | undefined, T | undefined]> {
  const m = new Map<string, [T | undefined, T | undefined]>();
  for (const x of xs) m.set(key(x), [x, undefined]);
  for (const y of ys) m.set(key(y), [m.get(key(y))?.[0], y]);
  return new Map([...m.entries()].sort(([p], [q]) => (p < q ? -1 : p > q ? 1 : 0)));
}

function entryDiff(
  kind: ConfigEntryDiff['kind'],
  name: string,
  before: string | undefined,
  after: string | undefined,
  opts: ConfigDiffOptions,
  notes: string[],
  filePath: string,
): ConfigEntryDiff[] {
  if (before === after && notes.length === 0) return [];
  const change = before === undefined ? 'added' : after === undefined ? 'removed' : 'modified';
  if (isBinary(before) || isBinary(after)) {
    const size = (t?: string) =>
      t === undefined ? 'none' : `${Buffer.byteLength(t)} bytes, sha256 ${sha256Hex(t).slice(0, 12)}`;
    return [
      {
        kind,
        name,
        change,
        notes: [...notes, `binary: ${size(before)} -> ${size(after)}`],
        lines: [],
        omittedLines: 0,
      },
    ];
  }
  const x = before === undefined ? undefined : maskSecrets(before);
  const y = after === undefined ? undefined : maskSecrets(after);
  const lines = unifiedDiff(x ?? '', y ?? '', {
    context: opts.context ?? 3,
    oldName: x === undefined ? '/dev/null' : `a${filePath}`,
    newName: y === undefined ? '/dev/null' : `b${filePath}`,
  });
  if (before !== after && x === y) notes.push('only masked values changed');
  if (lines.length === 0) return [{ kind, name, change, notes, lines: [], omittedLines: 0 }];
  // Long contents are summarised: the headers, then at most maxLines diff lines, then a count of the rest.
  const max = 2 + (opts.maxLines ?? 60);
  return [{ kind, name, change, notes, lines: lines.slice(0, max), omittedLines: Math.max(0, lines.length - max) }];
}

function isBinary(text: string | undefined): boolean {
  return text !== undefined && /[\0\uFFFD]/.test(text);
}

function octal(mode: number): string {
  return `0${mode.toString(8)}`;
}
