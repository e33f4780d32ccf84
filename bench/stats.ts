/** Small numeric and formatting helpers shared by the benchmarks. */

export interface Summary {
  readonly n: number;
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return { n: 0, min: NaN, median: NaN, max: NaN };
  const s = [...samples].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { n: s.length, min: s[0], median, max: s[s.length - 1] };
}

/** Milliseconds since `start` (from `now()`), with sub-millisecond resolution. */
export const now = (): bigint => process.hrtime.bigint();
export const msSince = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Human number: 3 significant digits for small values, thousands separators for large ones. */
export function fmt(v: number | undefined, unit = ''): string {
  if (v === undefined || Number.isNaN(v)) return 'n/a';
  const text = Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : Number(v.toPrecision(3)).toString();
  return unit ? `${text} ${unit}` : text;
}

export const fmtSummary = (s: Summary, unit = ''): string[] => [
  fmt(s.min, unit),
  fmt(s.median, unit),
  fmt(s.max, unit),
];

/** A Markdown table; the same text reads well in a terminal. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

export const mb = (bytes: number) => bytes / (1024 * 1024);
