import { changedClusters, checksumLine, createsStack, entryHeading, omittedLine, sidesLine, summaryLine } from './format-common';
import { ClusterReview, ReviewResult } from './model';
import { STATUS_WORDS } from './verdict';

/**
 * The review as GitHub-flavoured markdown for a pull-request comment: a
 * table of verdicts, then one collapsible `<details>` section per changed
 * cluster with its template diff and node-config diff in fenced blocks.
 */
export function formatMarkdown(r: ReviewResult): string {
  const out: string[] = [`### worker-stacks review`, '', `${code(sidesLine(r))}: ${summaryLine(r)}.`, ''];
  if (r.clusters.length) {
    out.push('| cluster | verdict |', '| --- | --- |');
    for (const c of r.clusters) out.push(`| ${code(c.name)} | ${cell(c)} |`);
    out.push('');
  }
  for (const c of changedClusters(r)) out.push(...section(c), '');
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}

function cell(c: ClusterReview): string {
  const [head, ...rest] = c.verdict.split(': ');
  const text = c.status === 'rolls' ? `**${head}**${rest.length ? `: ${rest.join(': ')}` : ''}` : c.verdict;
  return escapeCell(text);
}

function section(c: ClusterReview): string[] {
  const out = [
    '<details>',
    `<summary><code>${html(c.name)}</code>: ${c.status === 'rolls' ? `<b>${html(STATUS_WORDS.rolls)}</b>` : html(STATUS_WORDS[c.status])}</summary>`,
    '',
    `**${STATUS_WORDS[c.status]}**${c.verdict.includes(': ') ? `: ${escapeInline(c.verdict.slice(c.verdict.indexOf(': ') + 2))}` : ''}`,
    '',
  ];
  if (c.rollReasons.length || c.notes.length) {
    for (const why of c.rollReasons) out.push(`- why: ${escapeInline(why)}`);
    for (const note of c.notes) out.push(`- note: ${escapeInline(note)}`);
    out.push('');
  }
  if (c.template && createsStack(c)) {
    out.push(`Creates ${code(c.stackName)}: ${c.template.resources.length} resources.`, '');
  } else if (c.template && c.template.text.trim()) {
    out.push(`#### Template diff (${code(c.stackName)})`, '', ...fence('text', c.template.text.replace(/\n+$/, '')), '');
  }
  if (c.config) {
    out.push(`#### Node config (${c.config.headFormat ?? c.config.baseFormat}, checksum ${code(checksumLine(c))})`, '');
    const lines: string[] = [];
    for (const e of c.config.entries) {
      lines.push(`# ${entryHeading(e)}`, ...e.lines);
      if (e.omittedLines) lines.push(`# ${omittedLine(e.omittedLines)}`);
    }
    if (lines.length) out.push(...fence('diff', lines.join('\n')), '');
  }
  out.push('</details>');
  return out;
}

/** A fenced block whose fence is longer than any backtick run inside. */
function fence(lang: string, body: string): string[] {
  const longest = Math.max(2, ...(body.match(/`+/g) ?? []).map((m) => m.length));
  const f = '`'.repeat(longest + 1);
  return [`${f}${lang}`, body, f];
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

function escapeCell(text: string): string {
  // Keeps the bold markers of cell(); escapes the rest.
  return text
    .split('**')
    .map((part) => escapeInline(part))
    .join('**');
}
