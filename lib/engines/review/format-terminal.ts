import { ClusterReview, ClusterStatus, ReviewResult } from './model';
import { rolloutLines } from './rollout-plan';
import {
  changedClusters,
  checksumLine,
  createsStack,
  entryHeading,
  omittedLine,
  sidesLine,
  summaryLine,
} from './format-common';

export interface TerminalOptions {
  /** ANSI colours; the CLI turns them on only when stdout is a TTY (and NO_COLOR is unset). */
  readonly color: boolean;
}

type Paint = (text: string) => string;

function palette(on: boolean) {
  const sgr = (code: string): Paint => (on ? (t) => `\x1b[${code}m${t}\x1b[0m` : (t) => t);
  return {
    bold: sgr('1'),
    dim: sgr('2'),
    red: sgr('31'),
    green: sgr('32'),
    yellow: sgr('33'),
    magenta: sgr('35'),
    cyan: sgr('36'),
    boldRed: sgr('1;31'),
  };
}

/** The review for a terminal: a summary, then each changed cluster with its verdict, template diff and config diff. */
export function formatTerminal(r: ReviewResult, opts: TerminalOptions): string {
  const c = palette(opts.color);
  const statusPaint: Record<ClusterStatus, Paint> = {
    rolls: c.boldRed,
    changes: c.yellow,
    added: c.green,
    renamed: c.magenta,
    removed: c.red,
    unchanged: c.green,
    invalid: c.boldRed,
    fixed: c.green,
  };
  const out: string[] = [c.bold(`worker-stacks review: ${sidesLine(r)}`), summaryLine(r), ''];
  for (const cl of changedClusters(r)) out.push(...cluster(cl, statusPaint[cl.status], c), '');
  const same = r.clusters.filter((x) => x.status === 'unchanged').map((x) => x.name);
  if (same.length) out.push(c.dim(`no change: ${same.join(', ')}`));
  else if (r.clusters.length === 0) out.push('no worker stacks on either side');
  if (r.rollout) out.push('', ...rolloutLines(r.rollout));
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}

function cluster(cl: ClusterReview, paint: Paint, c: ReturnType<typeof palette>): string[] {
  const out = [`${c.bold(`== ${cl.name}`)} (${cl.stackName}): ${paint(cl.verdict)}`];
  for (const why of cl.rollReasons) out.push(`   why: ${why}`);
  for (const note of cl.notes) out.push(`   note: ${note}`);
  // A cluster with pools outside its shared stack: one line per pool (which stack, rolls or not, and why).
  const own = cl.pools.filter((p) => !p.shared);
  if (own.length) for (const p of cl.pools) out.push(`   pool ${p.name} (${p.stackName}): ${p.status}: ${p.why}`);
  for (const side of ['base', 'head'] as const) {
    if (cl.problems[side].length) out.push(`   invalid at ${side}:`, ...cl.problems[side].map((p) => `     ${p}`));
  }
  if (cl.template && createsStack(cl)) {
    out.push(`   creates ${cl.stackName}: ${cl.template.resources.length} resources`);
  } else if (cl.template && cl.template.text.trim()) {
    out.push('', c.bold('   Template diff (the cdk diff engine):'));
    out.push(
      ...indent(
        cl.template.text
          .replace(/\n+$/, '')
          .split('\n')
          .map((l) => paintTemplateLine(l, c)),
      ),
    );
  }
  if (cl.config) {
    out.push(
      '',
      c.bold(`   Node config (${cl.config.headFormat ?? cl.config.baseFormat}, checksum ${checksumLine(cl)}):`),
    );
    for (const e of cl.config.entries) {
      out.push(`   ${c.bold(entryHeading(e))}`);
      out.push(...indent(e.lines.map((l) => paintDiffLine(l, c))));
      if (e.omittedLines) out.push(indent([c.dim(omittedLine(e.omittedLines))])[0]);
    }
  }
  for (const p of own) {
    if (p.template?.text.trim() && p.status !== 'added') {
      out.push('', c.bold(`   Template diff of pool ${p.name} (${p.stackName}):`));
      out.push(
        ...indent(
          p.template.text
            .replace(/\n+$/, '')
            .split('\n')
            .map((l) => paintTemplateLine(l, c)),
        ),
      );
    }
    if (p.config) {
      out.push(
        '',
        c.bold(
          `   Node config of pool ${p.name} (${p.config.headFormat ?? p.config.baseFormat}, checksum ${checksumLine(p)}):`,
        ),
      );
      for (const e of p.config.entries) {
        out.push(`   ${c.bold(entryHeading(e))}`);
        out.push(...indent(e.lines.map((l) => paintDiffLine(l, c))));
        if (e.omittedLines) out.push(indent([c.dim(omittedLine(e.omittedLines))])[0]);
      }
    }
  }
  return out;
}

function indent(lines: string[]): string[] {
  return lines.map((l) => (l ? `     ${l}` : l));
}

function paintDiffLine(l: string, c: ReturnType<typeof palette>): string {
  if (l.startsWith('---') || l.startsWith('+++')) return c.bold(l);
  if (l.startsWith('@@')) return c.cyan(l);
  if (l.startsWith('+')) return c.green(l);
  if (l.startsWith('-')) return c.red(l);
  return l;
}

function paintTemplateLine(l: string, c: ReturnType<typeof palette>): string {
  return l.replace('[+]', c.green('[+]')).replace('[-]', c.red('[-]')).replace('[~]', c.yellow('[~]'));
}
