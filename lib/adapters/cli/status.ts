import { Command } from 'commander';
import { statusGroup, StatusRow, statusRows } from '../stores/status-rows';
import {
  BOOTSTRAP_STACKS_PER_REGION,
  DEFAULT_STACK_LIMIT,
  PlannedStacks,
  stackQuotaWarnings,
} from '../../model/cluster/pools/stack-quota';
import { storeFlags, storeOptions } from './store-flags';
import { DirOptions, dirFlags, EXIT, inputDirs, Io } from './context';

/** The parsed flags of `status` (with the store flags, read by storeOptions). */
interface StatusOptions extends DirOptions {
  /** --state-dir <dir>. @default <clusters>/.status */
  readonly stateDir?: string;
  /** -o, --output <format>: table or json (checked by the command). @default table */
  readonly output: string;
  /** --wide. @default false */
  readonly wide?: boolean;
  /** --stack-limit <n>: CloudFormation's stack quota per account and region. @default 2000 */
  readonly stackLimit?: string;
}

export function registerStatus(program: Command, io: Io, done: (code: number) => void): void {
  storeFlags(dirFlags(program.command('status')))
    .description('a table: cluster, desired vs live checksum, stack status, Ready and reason (reads the store only)')
    .option('--state-dir <dir>', 'where status files are kept (default <clusters>/.status)')
    .option('-o, --output <format>', 'table or json', 'table')
    .option('--wide', 'also the message, how the nodes roll, failures, next retry and the last config change')
    .option(
      '--stack-limit <n>',
      `warn when an account/region's stacks reach 80 % of this CloudFormation quota (default ${DEFAULT_STACK_LIMIT})`,
    )
    .action(async (opts: StatusOptions) => {
      if (opts.output !== 'table' && opts.output !== 'json') {
        io.err(`error: -o ${opts.output}: give table or json\n`);
        done(EXIT.usage);
        return;
      }
      const limit = opts.stackLimit === undefined ? DEFAULT_STACK_LIMIT : Number(opts.stackLimit);
      if (!Number.isSafeInteger(limit) || limit < 1) {
        io.err(
          `error: --stack-limit ${JSON.stringify(opts.stackLimit)} is not a stack count\n  fix: pass the account's CloudFormation stack quota per region as a whole number, such as 2000\n`,
        );
        done(EXIT.usage);
        return;
      }
      const dirs = inputDirs(opts);
      const rows = await statusRows(dirs.clustersDir, dirs.templatesDir, opts.stateDir, storeOptions(opts, dirs));
      // A status that cannot be read is an error a script must see, never an "Unknown" row with exit 0.
      const code = rows.some((r) => r.unreadable) ? EXIT.invalid : EXIT.ok;
      const source = opts.stackLimit === undefined ? 'the AWS default' : '--stack-limit';
      const warnings = stackQuotaWarnings(plannedFromRows(rows), () => ({ limit, source })).map((w) => w.message);
      if (opts.output === 'json') {
        io.out(JSON.stringify({ clusters: rows, ...(warnings.length ? { warnings } : {}) }, undefined, 2) + '\n');
        done(code);
        return;
      }
      for (const w of warnings) io.err(`warning: ${w}\n`);
      const now = Date.now();
      const table = [
        [
          'ACCOUNT/REGION',
          'CLUSTER',
          'GEN',
          'DESIRED',
          'LIVE',
          'SYNC',
          'PENDING',
          'STACK STATUS',
          'READY',
          'REASON',
          'AGE',
        ],
        ...rows.flatMap((r) => [
          tableRow(r, r.cluster, r, now),
          // Each pool in a stack of its own, under its cluster (whose row is the shared stack): cluster/pool.
          ...(r.pools ?? []).map((p) => tableRow(r, `${r.cluster}/${p.pool}`, p, now)),
        ]),
      ];
      const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
      for (const row of table)
        io.out(
          row
            .map((c, i) => c.padEnd(widths[i]))
            .join('  ')
            .trimEnd() + '\n',
        );
      // What a pager needs: why each cluster that is not settled is where it is.
      for (const r of rows.filter(
        (x) =>
          opts.wide ||
          x.unreadable ||
          (x.reason !== 'UpToDate' &&
            x.reason !== 'StackCreated' &&
            x.reason !== 'StackUpdated' &&
            x.reason !== 'Idle'),
      )) {
        if (!r.message && !opts.wide) continue;
        const extra = [
          opts.wide && r.rolls ? `rolls ${r.rolls}` : '',
          r.failures ? `failures ${r.failures}` : '',
          r.retryAfter ? `next retry ${r.retryAfter}` : '',
          r.lastConfigChange ? `last config change ${r.lastConfigChangeTime ?? ''}: ${r.lastConfigChange}` : '',
        ].filter(Boolean);
        io.out(`${r.cluster}: ${r.message ?? '-'}${extra.length ? ` (${extra.join('; ')})` : ''}\n`);
      }
      for (const r of rows)
        for (const p of r.pools ?? []) {
          if (!p.message || (!opts.wide && SETTLED_REASONS.has(p.reason ?? ''))) continue;
          const extra = [
            opts.wide && p.rolls ? `rolls ${p.rolls}` : '',
            p.failures ? `failures ${p.failures}` : '',
            p.retryAfter ? `next retry ${p.retryAfter}` : '',
          ].filter(Boolean);
          io.out(`${r.cluster}/${p.pool}: ${p.message}${extra.length ? ` (${extra.join('; ')})` : ''}\n`);
        }
      done(code);
    });
}

/**
 * The stacks of the rows' clusters per account and region, as `validate` plans them (stack-quota.ts): each cluster's
 * shared stack and its pools' own stacks (those the object names and those its status still records), + 1 bootstrap.
 */
function plannedFromRows(rows: readonly StatusRow[]): PlannedStacks[] {
  const by = new Map<string, { account: string; region: string; clusters: number; clusterStacks: number }>();
  for (const r of rows) {
    if (r.account === undefined || r.region === undefined) continue;
    const key = statusGroup(r);
    const e = by.get(key) ?? { account: r.account, region: r.region, clusters: 0, clusterStacks: 0 };
    e.clusters += 1;
    e.clusterStacks += 1 + (r.pools?.length ?? 0);
    by.set(key, e);
  }
  return [...by.values()]
    .sort((a, b) => (a.account === b.account ? a.region.localeCompare(b.region) : a.account.localeCompare(b.account)))
    .map((e) => ({ ...e, planned: e.clusterStacks + BOOTSTRAP_STACKS_PER_REGION }));
}

/** The columns of one stack's row: the shared stack's (the cluster's row) or a pool's own stack's. */
function tableRow(
  r: StatusRow,
  name: string,
  x: Pick<
    StatusRow,
    | 'observedGeneration'
    | 'desiredChecksum'
    | 'liveChecksum'
    | 'inSync'
    | 'pending'
    | 'stackStatus'
    | 'ready'
    | 'reason'
    | 'since'
  >,
  now: number,
): string[] {
  const short = (s?: string) => (s ? s.slice(0, 12) : '-');
  return [
    statusGroup(r),
    name,
    `${x.observedGeneration ?? '-'}/${r.generation}`,
    short(x.desiredChecksum),
    short(x.liveChecksum),
    x.inSync ? 'yes' : 'no',
    x.pending ?? '-',
    x.stackStatus ?? '-',
    r.paused ? `${x.ready} (paused)` : x.ready,
    x.reason ?? '-',
    age(x.since, now),
  ];
}

/** Reasons of a pool's stack that need no line of their own (it is settled). */
const SETTLED_REASONS = new Set(['UpToDate', 'StackCreated', 'StackUpdated', 'Idle']);

/** 3m, 2h, 5d: how long the shown condition has been so. */
function age(since: string | undefined, now: number): string {
  if (!since) return '-';
  const s = Math.max(0, Math.round((now - Date.parse(since)) / 1000));
  return s < 120
    ? `${s}s`
    : s < 7200
      ? `${Math.round(s / 60)}m`
      : s < 172800
        ? `${Math.round(s / 3600)}h`
        : `${Math.round(s / 86400)}d`;
}
