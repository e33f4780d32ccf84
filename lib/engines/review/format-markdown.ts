import { rolloutLines } from './rollout-plan';
import {
  changedClusters,
  checksumLine,
  createsStack,
  entryHeading,
  omittedLine,
  sidesLine,
  STATUS_ORDER,
  summaryLine,
} from './format-common';
import { ClusterReview, ReviewResult } from './model';
import { STATUS_WORDS } from './verdict';

/** GitHub refuses comments over 65,536 characters; the default leaves room for a bot's own text around the review. */
export const DEFAULT_MAX_BYTES = 60_000;
/** Below this, not even the summary table and the note on what was left out fit. */
export const MIN_MAX_BYTES = 2_000;

export interface MarkdownOptions {
  /** The output never exceeds this many bytes (UTF-8); what does not fit is left out and counted. @default 60,000 */
  readonly maxBytes?: number;
}

/** Names shown in a table cell or a section's list before "and N more". */
const NAMES_IN_TABLE = 10;
const NAMES_IN_SECTION = 50;
/** Lines per fenced block, tried in turn until a section fits the budget (0: no diff at all). */
const BLOCK_LIMITS = [Infinity, 200, 40, 10, 0];

/** Clusters whose diffs are identical once their own names and checksums are blanked: shown once. */
interface Group {
  readonly clusters: ClusterReview[];
  /** The diff text shown: the cluster's own when alone, else with `<cluster>`, `<checksum>` ... placeholders. */
  readonly show: (text: string) => string;
}

/**
 * The review as GitHub-flavoured markdown for a pull-request comment: a
 * summary table of verdicts first, then one collapsible `<details>` section
 * per distinct diff, listing the clusters it applies to. It never exceeds
 * `maxBytes`: sections that do not fit lose their diffs, then go entirely,
 * and the end says what was left out and that `--format json` has everything.
 */
export function formatMarkdown(r: ReviewResult, opts: MarkdownOptions = {}): string {
  const max = Math.max(opts.maxBytes ?? DEFAULT_MAX_BYTES, MIN_MAX_BYTES);
  // Room for the closing note, whatever it says.
  const reserve = 600;
  // The table lists names while they fit; a tiny budget gets counts only.
  const waves = r.rollout
    ? `${rolloutLines(r.rollout)
        .map((l) => `- ${l}`)
        .join('\n')}\n\n`
    : '';
  let head = summaryTable(r, NAMES_IN_TABLE) + waves;
  if (bytes(head) + reserve > max) head = summaryTable(r, 0);
  const groups = groupClusters(changedClusters(r));
  let out = head;
  const cut = { diffs: 0, sections: 0, clusters: 0, lists: groups.some((g) => g.clusters.length > NAMES_IN_SECTION) };
  for (const g of groups) {
    const fitting = BLOCK_LIMITS.map((limit) => `${section(g, limit).join('\n')}\n\n`).find(
      (s) => bytes(out) + bytes(s) + reserve <= max,
    );
    if (fitting === undefined) {
      cut.sections++;
      cut.clusters += g.clusters.length;
    } else {
      if (fitting !== `${section(g, Infinity).join('\n')}\n\n`) cut.diffs++;
      out += fitting;
    }
  }
  out += closingNote(cut, max);
  return `${out.replace(/\n+$/, '')}\n`;
}

/** The title, the sides and counts, and one table row per status with (up to `names`) of its clusters. */
function summaryTable(r: ReviewResult, names: number): string {
  const out = [`### worker-stacks review`, '', `${code(sidesLine(r))}: ${summaryLine(r)}.`, ''];
  if (r.clusters.length) {
    out.push('| verdict | clusters | which |', '| --- | --- | --- |');
    for (const status of STATUS_ORDER) {
      const these = r.clusters.filter((c) => c.status === status);
      const word = status === 'rolls' || status === 'invalid' ? `**${STATUS_WORDS[status]}**` : STATUS_WORDS[status];
      if (these.length)
        out.push(`| ${word} | ${these.length} | ${names ? nameList(these, names, code) : 'see --format json'} |`);
    }
    out.push('');
  }
  return `${out.join('\n')}\n`;
}

function closingNote(cut: { diffs: number; sections: number; clusters: number; lists: boolean }, max: number): string {
  const left: string[] = [];
  if (cut.diffs) left.push(`diff lines of ${cut.diffs} section${cut.diffs === 1 ? '' : 's'} (cut short or left out)`);
  if (cut.sections)
    left.push(
      `${cut.sections} whole section${cut.sections === 1 ? '' : 's'} (${cut.clusters} cluster${cut.clusters === 1 ? '' : 's'}; the table above counts them)`,
    );
  if (cut.lists) left.push(`cluster names after the first ${NAMES_IN_SECTION} of a section`);
  if (!left.length) return '';
  return `---\n\n**Left out to stay within ${max.toLocaleString('en-US')} bytes:** ${left.join('; ')}. \`worker-stacks review --format json\` has everything.\n`;
}

/** Groups changed clusters by status and normalised diff, in summary order, largest group first within a status. */
function groupClusters(changed: readonly ClusterReview[]): Group[] {
  const byKey = new Map<string, ClusterReview[]>();
  for (const c of changed) {
    const key = `${c.status}\n${normalise(c, body(c, Infinity).join('\n'))}`;
    byKey.set(key, [...(byKey.get(key) ?? []), c]);
  }
  const rank = (g: ClusterReview[]) => STATUS_ORDER.indexOf(g[0].status);
  return [...byKey.values()]
    .sort((x, y) => rank(x) - rank(y) || y.length - x.length || (x[0].name < y[0].name ? -1 : 1))
    .map((clusters) => ({
      clusters,
      show: clusters.length === 1 ? (t: string) => t : (t: string) => normalise(clusters[0], t),
    }));
}

/**
 * A cluster's diff text with what is its own blanked: its stack name, name
 * (and former name), config checksums and its config bucket's account and
 * region. Clusters equal after this got the same change.
 */
function normalise(c: ClusterReview, text: string): string {
  let t = text;
  const swap = (from: string | null | undefined, to: string) => {
    if (from) t = t.split(from).join(to);
  };
  swap(c.checksum.base, '<base checksum>');
  swap(c.checksum.head, '<head checksum>');
  swap(c.checksum.base?.slice(0, 12), '<base checksum>');
  swap(c.checksum.head?.slice(0, 12), '<head checksum>');
  swap(c.stackName, 'WorkerStack-<cluster>');
  t = t.replace(/worker-stacks-config-\d{12}-[a-z]{2}(?:-[a-z]+)+-\d+/g, 'worker-stacks-config-<account>-<region>');
  for (const [name, to] of [
    [c.name, '<cluster>'],
    [c.renamedFrom, '<old name>'],
  ] as const) {
    if (name)
      t = t.replace(
        new RegExp(`(?<![A-Za-z0-9-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9-])`, 'g'),
        to,
      );
  }
  return t;
}

function section(g: Group, limit: number): string[] {
  const c = g.clusters[0];
  const many = g.clusters.length > 1;
  const title =
    c.status === 'rolls' || c.status === 'invalid'
      ? `<b>${html(STATUS_WORDS[c.status])}</b>`
      : html(STATUS_WORDS[c.status]);
  const out = [
    '<details>',
    `<summary>${title}: ${many ? `${g.clusters.length} clusters, one diff: ` : ''}${nameList(g.clusters, 5, (n) => `<code>${html(n)}</code>`)}</summary>`,
    '',
  ];
  // Verdicts differ with each cluster's own settings (batch size, capacity): one line per distinct verdict.
  const verdicts = new Map<string, ClusterReview[]>();
  for (const x of g.clusters) verdicts.set(x.verdict, [...(verdicts.get(x.verdict) ?? []), x]);
  for (const [verdict, xs] of verdicts) {
    const [word, ...rest] = verdict.split(': ');
    out.push(
      `${many ? '- ' : ''}**${escapeInline(word)}**${rest.length ? `: ${escapeInline(rest.join(': '))}` : ''}${many ? ` — ${nameList(xs, NAMES_IN_SECTION, code)}` : ''}`,
    );
  }
  out.push('');
  if (many)
    out.push(
      `The same diff for all ${g.clusters.length}; \`<cluster>\` and \`<base checksum>\`/\`<head checksum>\` stand for each one's own.`,
      '',
    );
  out.push(...body(c, limit).map(g.show), '</details>');
  return out;
}

/** What a cluster's section says below its verdict: reasons, notes, problems, the template and config diffs (blocks cut at `limit` lines). */
function body(c: ClusterReview, limit: number): string[] {
  const out: string[] = [];
  const own = c.pools.filter((p) => !p.shared);
  if (c.rollReasons.length || c.notes.length || own.length) {
    for (const why of c.rollReasons) out.push(`- why: ${escapeInline(why)}`);
    for (const note of c.notes) out.push(`- note: ${escapeInline(note)}`);
    // A cluster with pools outside its shared stack: one line per pool (which stack, rolls or not, and why).
    if (own.length)
      for (const p of c.pools)
        out.push(`- pool ${code(p.name)} (${code(p.stackName)}): **${p.status}**: ${escapeInline(p.why)}`);
    out.push('');
  }
  for (const side of ['base', 'head'] as const) {
    if (c.problems[side].length)
      out.push(`Invalid at ${side}:`, '', ...fence('text', c.problems[side].join('\n'), limit), '');
  }
  if (c.template && createsStack(c)) {
    out.push(`Creates ${code(c.stackName)}: ${c.template.resources.length} resources.`, '');
  } else if (c.template && c.template.text.trim()) {
    out.push(
      `#### Template diff (${code(c.stackName)})`,
      '',
      ...fence('text', c.template.text.replace(/\n+$/, ''), limit),
      '',
    );
  }
  if (c.config) {
    out.push(`#### Node config (${c.config.headFormat ?? c.config.baseFormat}, checksum ${code(checksumLine(c))})`, '');
    const lines: string[] = [];
    for (const e of c.config.entries) {
      lines.push(`# ${entryHeading(e)}`, ...e.lines);
      if (e.omittedLines) lines.push(`# ${omittedLine(e.omittedLines)}`);
    }
    if (lines.length) out.push(...fence('diff', lines.join('\n'), limit), '');
  }
  for (const p of own) {
    if (p.template?.text.trim() && p.status !== 'added')
      out.push(
        `#### Template diff of pool ${code(p.name)} (${code(p.stackName)})`,
        '',
        ...fence('text', p.template.text.replace(/\n+$/, ''), limit),
        '',
      );
    if (p.config) {
      const lines = p.config.entries.flatMap((e) => [
        `# ${entryHeading(e)}`,
        ...e.lines,
        ...(e.omittedLines ? [`# ${omittedLine(e.omittedLines)}`] : []),
      ]);
      out.push(
        `#### Node config of pool ${code(p.name)} (${p.config.headFormat ?? p.config.baseFormat}, checksum ${code(checksumLine(p))})`,
        '',
      );
      if (lines.length) out.push(...fence('diff', lines.join('\n'), limit), '');
    }
  }
  return out;
}

/** `a`, `b` and 3 more */
function nameList(cs: readonly ClusterReview[], n: number, show: (name: string) => string): string {
  const names = cs.slice(0, n).map((c) => show(c.name));
  return cs.length > n ? `${names.join(', ')} and ${cs.length - n} more` : names.join(', ');
}

/** A fenced block whose fence is longer than any backtick run inside, cut after `limit` lines with a count of the rest. */
function fence(lang: string, body: string, limit = Infinity): string[] {
  if (limit === 0) return ['*(diff left out to fit the comment; `--format json` has it)*'];
  let lines = body.split('\n');
  if (lines.length > limit)
    lines = [
      ...lines.slice(0, limit),
      `... ${lines.length - limit} more lines left out to fit the comment (--format json has them)`,
    ];
  const text = lines.join('\n');
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((m) => m.length));
  const f = '`'.repeat(longest + 1);
  return [`${f}${lang}`, text, f];
}

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function code(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((m) => m.length));
  const f = '`'.repeat(longest + 1);
  return longest ? `${f} ${text} ${f}` : `${f}${text}${f}`;
}

function html(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Markdown-inert inline text: characters that would start emphasis, links, code or HTML are escaped. */
function escapeInline(text: string): string {
  return text.replace(/([\\`*_[\]<>|#])/g, '\\$1');
}
