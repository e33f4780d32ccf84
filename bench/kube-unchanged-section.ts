/**
 * Runs only the kube-unchanged scenario and prints its RESULTS.md section (the same layout writeMarkdown uses), for
 * adding to bench/RESULTS.md by hand without rewriting the other sections from a results.json this machine may lack.
 *
 *   npx ts-node --transpile-only bench/kube-unchanged-section.ts [--quick]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runKubeUnchanged } from './kube-unchanged';

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-bench-kube-'));
  try {
    const s = await runKubeUnchanged({ quick, tmp });
    const code = `code ${s.code.commit}${s.code.modified.length ? ` + uncommitted changes to ${s.code.modified.join(', ')}` : ''}`;
    const show = (v: number, unit: string) =>
      `${Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : Number(v.toPrecision(3))}${unit ? ` ${unit}` : ''}`;
    const lines = [
      `## ${s.title}`,
      '',
      `Run ${s.date.slice(0, 16).replace('T', ' ')} UTC, ${code}, load average ${s.loadavg.map((l) => l.toFixed(2)).join(' → ')}.`,
      '',
    ];
    lines.push('| figure | measured | target | |', '| --- | --- | --- | --- |');
    for (const f of s.figures)
      lines.push(
        `| ${f.label} | ${show(f.value, f.unit)} | ${f.target ? `${f.target.op === '<=' ? '≤' : '='} ${show(f.target.value, f.unit)}` : ''} | ${f.target ? (f.pass ? 'pass' : '**miss**') : ''} |`,
      );
    lines.push('');
    for (const t of s.tables) lines.push(t, '');
    for (const n of s.notes) lines.push(`- ${n}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
