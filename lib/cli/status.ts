import { Command } from 'commander';
import { validateCluster } from '../cluster/validate';
import { getCondition } from '../cluster/status';
import { renderConfig } from '../cloudconfig/render';
import { listTemplates } from '../cloudconfig/templates';
import { FileStore } from '../stores/file-store';
import { workerStackName } from '../stacks/naming';
import { dirFlags, EXIT, inputDirs, Io } from './context';

export interface StatusRow {
  readonly cluster: string;
  readonly generation: number;
  readonly observedGeneration?: number;
  readonly desiredChecksum?: string;
  readonly liveChecksum?: string;
  readonly inSync: boolean;
  readonly stack: string;
  readonly stackStatus?: string;
  readonly ready: string;
  readonly reason?: string;
  readonly message?: string;
}

/** The status table, from the store alone (no AWS call): desired vs live checksum, stack status, Ready and why. */
export async function statusRows(clustersDir: string, templatesDir: string, stateDir?: string): Promise<StatusRow[]> {
  const store = new FileStore({ clustersDir, stateDir });
  const templates = listTemplates(templatesDir);
  const records = await store.list();
  const gone = store.statusNames().filter((n) => !records.some((r) => r.name === n));
  const all = [...records, ...(await Promise.all(gone.map((n) => store.get(n)))).filter((r) => r !== undefined)];
  return all
    .map((r) => {
      const v = r.raw ? validateCluster(r.raw, { file: r.source, templates }) : undefined;
      const desired = v?.cluster ? renderConfig(v.cluster, templatesDir).checksum : undefined;
      const ready = getCondition(r.status, 'Ready');
      const failed = getCondition(r.status, 'Failed');
      const shown = failed?.status === 'True' ? failed : (getCondition(r.status, 'Progressing')?.status === 'True' ? getCondition(r.status, 'Progressing') : ready);
      return {
        cluster: r.name,
        generation: r.generation,
        observedGeneration: r.status?.observedGeneration,
        desiredChecksum: desired,
        liveChecksum: r.status?.cloudConfigChecksum,
        inSync: Boolean(desired && desired === r.status?.cloudConfigChecksum && r.status?.observedGeneration === r.generation),
        stack: workerStackName(r.name),
        stackStatus: r.status?.stackStatus,
        ready: r.raw === undefined && !records.includes(r) ? 'Removed' : (ready?.status ?? 'Unknown'),
        reason: shown?.reason ?? (v && !v.cluster ? 'InvalidSpec' : undefined),
        message: shown?.message,
      };
    })
    .sort((a, b) => (a.cluster < b.cluster ? -1 : 1));
}

export function registerStatus(program: Command, io: Io, done: (code: number) => void): void {
  dirFlags(program.command('status'))
    .description('a table: cluster, desired vs live checksum, stack status, Ready and reason (reads the store only)')
    .option('--state-dir <dir>', 'where status files are kept (default <clusters>/.status)')
    .option('-o, --output <format>', 'table or json', 'table')
    .action(async (opts) => {
      const dirs = inputDirs(opts);
      const rows = await statusRows(dirs.clustersDir, dirs.templatesDir, opts.stateDir);
      if (opts.output === 'json') {
        io.out(JSON.stringify({ clusters: rows }, undefined, 2) + '\n');
        return done(EXIT.ok);
      }
      const short = (s?: string) => (s ? s.slice(0, 12) : '-');
      const table = [
        ['CLUSTER', 'GEN', 'DESIRED', 'LIVE', 'SYNC', 'STACK STATUS', 'READY', 'REASON'],
        ...rows.map((r) => [r.cluster, `${r.observedGeneration ?? '-'}/${r.generation}`, short(r.desiredChecksum), short(r.liveChecksum), r.inSync ? 'yes' : 'no', r.stackStatus ?? '-', r.ready, r.reason ?? '-']),
      ];
      const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
      for (const row of table) io.out(row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd() + '\n');
      return done(EXIT.ok);
    });
}
