/** One line of a line diff: kept, removed (base only) or added (head only). */
interface Op {
  readonly kind: ' ' | '-' | '+';
  readonly text: string;
  /** 1-based line numbers on each side (the line before, for the side it is not on). */
  readonly a: number;
  readonly b: number;
}

export interface UnifiedDiffOptions {
  /** Lines of context around each change. @default 3 */
  readonly context?: number;
  /** Names in the `---` / `+++` header; no header when unset. */
  readonly oldName?: string;
  readonly newName?: string;
}

/** Largest middle section (after common head and tail are cut) diffed line by line; larger ones are shown as replaced. */
const MAX_CELLS = 4_000_000;

/**
 * A unified diff (`diff -u` style hunks) of two texts, as lines. Empty when
 * the texts are equal. Longest-common-subsequence on the lines between the
 * common beginning and end, which keeps config diffs small and exact.
 */
export function unifiedDiff(oldText: string, newText: string, opts: UnifiedDiffOptions = {}): string[] {
  if (oldText === newText) return [];
  const a = splitLines(oldText);
  const b = splitLines(newText);
  // A last line without its newline differs from the same line with one.
  const key = (s: { lines: string[]; noEol: boolean }) =>
    s.lines.map((l, i) => (s.noEol && i === s.lines.length - 1 ? `${l}\0` : l));
  const ops = diffLines(key(a), key(b)).map((o) => ({ ...o, text: o.text.replace(/\0$/, '') }));
  const context = opts.context ?? 3;
  const out: string[] = [];
  if (opts.oldName !== undefined) out.push(`--- ${opts.oldName}`, `+++ ${opts.newName ?? opts.oldName}`);
  const changed = ops.map((o, i) => (o.kind !== ' ' ? i : -1)).filter((i) => i >= 0);
  let i = 0;
  while (i < changed.length) {
    const start = Math.max(0, changed[i] - context);
    let end = changed[i];
    while (i < changed.length && changed[i] - end <= 2 * context) end = changed[i++];
    const last = Math.min(ops.length - 1, end + context);
    const hunk = ops.slice(start, last + 1);
    const aLines = hunk.filter((o) => o.kind !== '+').length;
    const bLines = hunk.filter((o) => o.kind !== '-').length;
    // A side with no line in the hunk: its empty range sits at the first line's position on that side.
    const aStart = (hunk.find((o) => o.kind !== '+') ?? hunk[0]).a;
    const bStart = (hunk.find((o) => o.kind !== '-') ?? hunk[0]).b;
    out.push(`@@ -${range(aStart, aLines)} +${range(bStart, bLines)} @@`);
    for (const o of hunk) {
      out.push(`${o.kind}${o.text}`);
      const noEol =
        (o.kind !== '+' && o.a === a.lines.length && a.noEol) || (o.kind !== '-' && o.b === b.lines.length && b.noEol);
      if (noEol) out.push('\\ No newline at end of file');
    }
  }
  return out;
}

function range(start: number, count: number): string {
  return count === 1 ? `${start}` : `${start},${count}`;
}

function splitLines(text: string): { lines: string[]; noEol: boolean } {
  if (text === '') return { lines: [], noEol: false };
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') {
    lines.pop();
    return { lines, noEol: false };
  }
  return { lines, noEol: true };
}

function diffLines(a: readonly string[], b: readonly string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const ops: Op[] = [];
  for (let k = 0; k < head; k++) ops.push({ kind: ' ', text: a[k], a: k + 1, b: k + 1 });
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  for (const o of midA.length * midB.length <= MAX_CELLS ? lcsOps(midA, midB) : replaceOps(midA, midB)) {
    ops.push({ kind: o.kind, text: o.text, a: o.a + head, b: o.b + head });
  }
  for (let k = tail; k > 0; k--)
    ops.push({ kind: ' ', text: a[a.length - k], a: a.length - k + 1, b: b.length - k + 1 });
  return ops;
}

function replaceOps(a: readonly string[], b: readonly string[]): Op[] {
  return [
    ...a.map((text, i) => ({ kind: '-' as const, text, a: i + 1, b: 0 })),
    ...b.map((text, j) => ({ kind: '+' as const, text, a: a.length, b: j + 1 })),
  ];
}

/** Classic LCS table; removals before additions inside each change, as diff -u prints them. */
function lcsOps(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const w = m + 1;
  const t = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      t[i * w + j] = a[i] === b[j] ? t[(i + 1) * w + j + 1] + 1 : Math.max(t[(i + 1) * w + j], t[i * w + j + 1]);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ kind: ' ', text: a[i], a: i + 1, b: j + 1 });
      i++;
      j++;
    } else if (j >= m || (i < n && t[(i + 1) * w + j] >= t[i * w + j + 1])) {
      ops.push({ kind: '-', text: a[i], a: i + 1, b: j });
      i++;
    } else {
      ops.push({ kind: '+', text: b[j], a: i, b: j + 1 });
      j++;
    }
  }
  return ops;
}
