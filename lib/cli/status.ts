import { Command } from 'commander';
import { derive } from '../cluster/derive';
import { getCondition } from '../cluster/status';
import { listTemplates } from '../cloudconfig/templates';
import { ClusterStatus } from '../cluster/status';
import { ClusterRecord } from '../stores/cluster-store';
import { createStore, StoreOptions } from '../stores/create-store';
import { storeFlags, storeOptions } from './store-flags';
import { workerStackName } from '../stacks/naming';
import { describeRollout, specRollout } from '../review/rollout-words';
import { DirOptions, dirFlags, EXIT, inputDirs, Io } from './context';

export interface StatusRow {
  readonly cluster: string;
  /** The cluster's account and region (from the object, else from the recorded stack's ARN): the table groups by them. */
  readonly account?: string;
  readonly region?: string;
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
  /** When the shown condition last changed (ISO 8601). */
  readonly since?: string;
  readonly failures?: number;
  readonly retryAfter?: string;
  readonly lastConfigChange?: string;
  readonly lastConfigChangeTime?: string;
  readonly paused: boolean;
  /** How the object's nodes roll: strategy, batches, the gate, drain (`in batches of 2, ..., gated by node signals (100% within PT10M), drained`). */
  readonly rolls?: string;
  /** The status could not be read: what is wrong and how to fix it. */
  readonly unreadable?: string;
  /** The whole status, for -o json. */
  readonly status?: ClusterStatus;
}

/** The status table, from the store alone (no AWS call): desired vs live checksum, stack status, Ready and why. */
export async function statusRows(clustersDir: string, templatesDir: string, stateDir?: string, storeOpts?: StoreOptions): Promise<StatusRow[]> {
  const store = createStore(storeOpts ?? { clustersDir, stateDir });
  const templates = listTemplates(templatesDir);
  const records = await store.list().finally(() => store.close?.());
  const gone = store.statusNames().filter((n) => !records.some((r) => r.name === n));
  // A removed object's status that cannot be read is a row that says why (exit 1), as for a present object.
  const unreadableGone = (name: string, e: unknown): ClusterRecord => ({ name, source: name, parseProblems: [{ file: `${name} (object removed)`, path: '', message: (e as Error).message }], generation: 0, resourceVersion: 'unreadable' });
  const all = [...records, ...(await Promise.all(gone.map((n) => store.get(n).catch((e: unknown) => unreadableGone(n, e))))).filter((r) => r !== undefined)];
  return all
    .map((r) => {
      const unreadable = r.resourceVersion === 'unreadable' ? r.parseProblems.map((p) => `${p.file}: ${p.message}`).join('; ') : undefined;
      const v = r.raw && !unreadable ? derive(r.raw, { file: r.source, templatesDir, templates }) : undefined;
      // A config that does not render is shown as '-': `worker-stacks render` says why.
      const desired = v?.config?.checksum;
      const ready = getCondition(r.status, 'Ready');
      const is = (t: 'Stalled' | 'Degraded' | 'Progressing') => (getCondition(r.status, t)?.status === 'True' ? getCondition(r.status, t) : undefined);
      const shown = is('Stalled') ?? is('Degraded') ?? is('Progressing') ?? getCondition(r.status, 'Progressing') ?? ready;
      const spec = (r.raw as { spec?: { account?: unknown; region?: unknown } } | undefined)?.spec;
      const arn = r.status?.stackId?.split(':');
      return {
        cluster: r.name,
        account: typeof spec?.account === 'string' ? spec.account : arn?.[4],
        region: typeof spec?.region === 'string' ? spec.region : arn?.[3],
        generation: r.generation,
        observedGeneration: r.status?.observedGeneration,
        desiredChecksum: desired,
        liveChecksum: r.status?.cloudConfigChecksum,
        // In sync: the live stack runs this generation's inputs, not only its node config. An image or size change keeps
        // the checksum, so equal checksums alone would say yes for a change that stalled or rolled back.
        inSync: Boolean(desired && desired === r.status?.cloudConfigChecksum && ready?.status === 'True' && ready.observedGeneration === r.generation),
        stack: workerStackName(r.name),
        stackStatus: r.status?.stackStatus,
        ready: unreadable ? 'Unreadable' : r.raw === undefined && !records.includes(r) ? 'Removed' : (ready?.status ?? 'Unknown'),
        reason: unreadable ? 'StatusUnreadable' : (shown?.reason ?? (v?.stage === 'validate' ? 'InvalidSpec' : v?.stage === 'render' ? 'RenderFailed' : undefined)),
        message: unreadable ? unreadable.replace(/\s*\n\s*/g, '; ') : (shown?.message ?? (v?.stage === 'validate' ? 'invalid object: run worker-stacks validate' : v?.stage === 'render' ? 'the node config does not render: run worker-stacks render' : undefined)),
        since: shown?.lastTransitionTime,
        failures: r.status?.controller?.failures,
        retryAfter: r.status?.controller?.retryAfter,
        lastConfigChange: r.status?.lastConfigChange,
        lastConfigChangeTime: r.status?.lastConfigChangeTime,
        paused: Boolean(v?.cluster?.spec.paused),
        rolls: v?.cluster ? describeRollout(specRollout(v.cluster.spec)) : undefined,
        unreadable,
        status: r.status,
      };
    })
    .sort((a, b) => (group(a) !== group(b) ? (group(a) < group(b) ? -1 : 1) : a.cluster < b.cluster ? -1 : 1));
}

/** `<account>/<region>`: one daemon, many accounts, so the table groups by where each cluster lives. */
function group(r: Pick<StatusRow, 'account' | 'region'>): string {
  return `${r.account ?? '-'}/${r.region ?? '-'}`;
}

/** The parsed flags of `status` (with the store flags, read by storeOptions). */
interface StatusOptions extends DirOptions {
  /** --state-dir <dir>. @default <clusters>/.status */
  readonly stateDir?: string;
  /** -o, --output <format>: table or json (checked by the command). @default table */
  readonly output: string;
  /** --wide. @default false */
  readonly wide?: boolean;
}

export function registerStatus(program: Command, io: Io, done: (code: number) => void): void {
  storeFlags(dirFlags(program.command('status')))
    .description('a table: cluster, desired vs live checksum, stack status, Ready and reason (reads the store only)')
    .option('--state-dir <dir>', 'where status files are kept (default <clusters>/.status)')
    .option('-o, --output <format>', 'table or json', 'table')
    .option('--wide', 'also the message, how the nodes roll, failures, next retry and the last config change')
    .action(async (opts: StatusOptions) => {
      if (opts.output !== 'table' && opts.output !== 'json') {
        io.err(`error: -o ${opts.output}: give table or json\n`);
        done(EXIT.usage); return;
      }
      const dirs = inputDirs(opts);
      const rows = await statusRows(dirs.clustersDir, dirs.templatesDir, opts.stateDir, storeOptions(opts, dirs));
      // A status that cannot be read is an error a script must see, never an "Unknown" row with exit 0.
      const code = rows.some((r) => r.unreadable) ? EXIT.invalid : EXIT.ok;
      if (opts.output === 'json') {
        io.out(JSON.stringify({ clusters: rows }, undefined, 2) + '\n');
        done(code); return;
      }
      const short = (s?: string) => (s ? s.slice(0, 12) : '-');
      const now = Date.now();
      const table = [
        ['ACCOUNT/REGION', 'CLUSTER', 'GEN', 'DESIRED', 'LIVE', 'SYNC', 'STACK STATUS', 'READY', 'REASON', 'AGE'],
        ...rows.map((r) => [group(r), r.cluster, `${r.observedGeneration ?? '-'}/${r.generation}`, short(r.desiredChecksum), short(r.liveChecksum), r.inSync ? 'yes' : 'no', r.stackStatus ?? '-', r.paused ? `${r.ready} (paused)` : r.ready, r.reason ?? '-', age(r.since, now)]),
      ];
      const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
      for (const row of table) io.out(row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd() + '\n');
      // What a pager needs: why each cluster that is not settled is where it is.
      for (const r of rows.filter((x) => opts.wide || x.unreadable || x.reason !== 'UpToDate' && x.reason !== 'StackCreated' && x.reason !== 'StackUpdated' && x.reason !== 'Idle')) {
        if (!r.message && !opts.wide) continue;
        const extra = [opts.wide && r.rolls ? `rolls ${r.rolls}` : '', r.failures ? `failures ${r.failures}` : '', r.retryAfter ? `next retry ${r.retryAfter}` : '', r.lastConfigChange ? `last config change ${r.lastConfigChangeTime ?? ''}: ${r.lastConfigChange}` : ''].filter(Boolean);
        io.out(`${r.cluster}: ${r.message ?? '-'}${extra.length ? ` (${extra.join('; ')})` : ''}\n`);
      }
      done(code);
    });
}

/** 3m, 2h, 5d: how long the shown condition has been so. */
function age(since: string | undefined, now: number): string {
  if (!since) return '-';
  const s = Math.max(0, Math.round((now - Date.parse(since)) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : s < 172800 ? `${Math.round(s / 3600)}h` : `${Math.round(s / 86400)}d`;
}
