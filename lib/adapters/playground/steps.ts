import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { getCondition } from '../../model/cluster/schema/status';
import { statusRows, StatusRow } from '../stores/status-rows';
import { templatesVersion } from '../../model/cloudconfig/templates';
import { WorkerStacksError } from '../../core/errors';
import { asRecord } from '../../core/json';
import { Session } from './session';
import { templateDirectory } from '../../platform/files/template-directory';

/**
 * The fixed script of `worker-stacks playground --steps`: each step does one thing a user would do by hand (or
 * waits for what the daemon should make of it), then reports `status -o json`'s rows and the stacks as listed.
 */
export const STEPS = [
  'wait-ready',
  'edit-template',
  'wait-rolled',
  'edit-tags',
  'inject-failure',
  'wait-stalled',
  'stop',
] as const;
export type StepName = (typeof STEPS)[number];

/** An image id EC2 does not know: valid as an object, and the stack that launches from it rolls back. */
export const MISSING_IMAGE = 'ami-0000000000000dead';
/** The line the edit-template step appends (a comment: the config's bytes change, its meaning does not). */
export const TEMPLATE_EDIT = '# edited in the playground\n';

export interface StepReport {
  readonly step: StepName;
  /** What the step changed, when it changed something. */
  readonly changed?: Record<string, unknown>;
  readonly clusters: StatusRow[];
  readonly stacks: Record<string, { status?: string; outputs: Record<string, string> }>;
}

/** What a step leaves for the next one (which template was edited, which cluster was broken). */
interface ScriptState {
  template?: string;
  users?: string[];
  others?: Record<string, string | undefined>;
  before?: Record<string, string | undefined>;
  broken?: string;
}

export interface StepOptions {
  /** Longest wait of a wait-* step. @default 5 min */
  readonly timeoutMs?: number;
  readonly progress: (line: string) => void;
}

/** Runs the steps in order; `report` gets each step's report. Throws on the first step that does not come true. */
export async function runSteps(
  session: Session,
  steps: readonly StepName[],
  report: (r: StepReport) => void,
  opts: StepOptions,
): Promise<void> {
  const state: ScriptState = {};
  for (const step of steps) {
    if (step === 'stop') break; // the caller stops the session, and reports it
    opts.progress(`step ${step}`);
    const changed = await STEP_ACTIONS[step](session, state, opts);
    report({ step, changed, clusters: await rows(session), stacks: await session.stacks() });
  }
}

/** `status -o json`'s rows. The templates' version is read first: this process outlives edits to them (as the daemon does). */
const rows = (s: Session) => {
  templatesVersion(templateDirectory(s.templatesDir));
  return statusRows(s.clustersDir, s.templatesDir);
};
const ready = (r: StatusRow) => r.ready === 'True' && r.inSync;
const template = (s: Session, name: string): string | undefined => {
  const t = asRecord(
    asRecord(asRecord(parseDocument(fs.readFileSync(path.join(s.clustersDir, `${name}.yaml`), 'utf8')).toJS()).spec)
      .cloudConfig,
  ).template;
  return typeof t === 'string' ? t : undefined;
};

const STEP_ACTIONS: Record<
  Exclude<StepName, 'stop'>,
  (s: Session, st: ScriptState, o: StepOptions) => Promise<Record<string, unknown> | undefined>
> = {
  'wait-ready': async (s, _st, o) => {
    await waitForReady(s, o);
    return undefined;
  },

  // Edits a file of the template most clusters use: exactly those clusters must roll.
  'edit-template': async (s, st) => {
    const current = await rows(s);
    const byTemplate = new Map<string, string[]>();
    for (const r of current) {
      const t = template(s, r.cluster);
      if (t) byTemplate.set(t, [...(byTemplate.get(t) ?? []), r.cluster]);
    }
    const [name, users] = [...byTemplate].sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1))[0];
    const dir = path.join(s.templatesDir, name);
    const own = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.hbs'))
      .sort();
    if (own.length === 0) throw new WorkerStacksError(`template ${name} has no .hbs file of its own to edit`);
    const file = path.join(dir, own[0]);
    st.template = name;
    st.users = users;
    st.before = Object.fromEntries(current.map((r) => [r.cluster, r.liveChecksum]));
    fs.appendFileSync(file, TEMPLATE_EDIT);
    return { template: name, file: path.relative(s.dir, file), clusters: users };
  },

  'wait-rolled': async (s, st, o) => {
    if (!st.users || !st.before) throw new WorkerStacksError('wait-rolled needs an edit-template step before it');
    const { users, before } = st;
    await waitFor(
      s,
      `${users.join(', ')} rolled to a new checksum`,
      (rs) => rs.every((r) => ready(r) && (users.includes(r.cluster) ? r.liveChecksum !== before[r.cluster] : true)),
      o,
    );
    return undefined;
  },

  // A tags-only edit of every cluster with listeners (a load balancer): its stack updates, no node rolls.
  'edit-tags': async (s) => {
    const edited: string[] = [];
    for (const r of await rows(s)) {
      const file = path.join(s.clustersDir, `${r.cluster}.yaml`);
      const doc = parseDocument(fs.readFileSync(file, 'utf8'));
      if (!doc.hasIn(['spec', 'listeners'])) continue;
      doc.setIn(['spec', 'tags', 'playground-edit'], 'tags-only');
      fs.writeFileSync(`${file}.tmp`, doc.toString({ lineWidth: 0 }));
      fs.renameSync(`${file}.tmp`, file);
      edited.push(r.cluster);
    }
    return { clusters: edited, field: 'spec.tags.playground-edit' };
  },

  // Breaks the first cluster the template edit left alone: its next update launches from an image that does not exist.
  'inject-failure': async (s, st) => {
    const names = (await rows(s)).map((r) => r.cluster);
    const victim = names.find((n) => !st.users?.includes(n)) ?? names[0];
    const file = path.join(s.clustersDir, `${victim}.yaml`);
    const doc = parseDocument(fs.readFileSync(file, 'utf8'));
    // A cluster of named pools breaks its first pool (the one in its shared stack, when it is named default).
    const pooled = doc.hasIn(['spec', 'pools']);
    doc.setIn(pooled ? ['spec', 'pools', 0, 'machineImage'] : ['spec', 'pool', 'machineImage'], MISSING_IMAGE);
    // Saved as careful editors save: a whole new file renamed over the old one, so no reader sees half of it.
    fs.writeFileSync(`${file}.tmp`, doc.toString({ lineWidth: 0 }));
    fs.renameSync(`${file}.tmp`, file);
    st.broken = victim;
    return {
      cluster: victim,
      field: pooled ? 'spec.pools[0].machineImage' : 'spec.pool.machineImage',
      value: MISSING_IMAGE,
    };
  },

  'wait-stalled': async (s, st, o) => {
    const victim = st.broken;
    if (!victim) throw new WorkerStacksError('wait-stalled needs an inject-failure step before it');
    await waitFor(
      s,
      `${victim} Stalled`,
      (rs) => getCondition(rs.find((r) => r.cluster === victim)?.status, 'Stalled')?.status === 'True',
      o,
    );
    return undefined;
  },
};

/** Until every cluster is Ready with its desired checksum live; a cluster that stalls ends the wait (it never recovers by itself). */
export function waitForReady(s: Session, o: StepOptions, stopping: () => boolean = () => false): Promise<StatusRow[]> {
  return waitFor(
    s,
    'every cluster Ready with its desired checksum live',
    (rs) => {
      const stalled = rs.find((r) => getCondition(r.status, 'Stalled')?.status === 'True');
      if (stalled)
        throw new WorkerStacksError(`${stalled.cluster} is Stalled (${stalled.reason}): ${stalled.message}`, {
          hint: `read ${path.join(s.dir, 'daemon.log')} and moto.log (run with --keep to keep them)`,
        });
      return stopping() || (rs.length > 0 && rs.every(ready));
    },
    o,
  );
}

/**
 * Polls the status (the store, as `status` reads it) once a second until `done`, printing each cluster's change of
 * stack status, Ready or reason as it happens. Throws after the timeout, naming what it waited for.
 */
export async function waitFor(
  s: Session,
  what: string,
  done: (rs: StatusRow[]) => boolean,
  o: StepOptions,
): Promise<StatusRow[]> {
  const deadline = Date.now() + (o.timeoutMs ?? 5 * 60_000);
  const seen = new Map<string, string>();
  for (;;) {
    const rs = await rows(s);
    for (const r of rs) {
      const line = describe(r);
      if (seen.get(r.cluster) !== line) o.progress(`  ${line}`);
      seen.set(r.cluster, line);
    }
    if (done(rs)) return rs;
    if (Date.now() > deadline)
      throw new WorkerStacksError(`timed out waiting for ${what}`, {
        hint: `read ${path.join(s.dir, 'daemon.log')} (run with --keep to keep it)`,
      });
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * One cluster's state on one line, as a user follows it: `prod-eu1  UPDATE_IN_PROGRESS  Ready=True  ChangeSetExecuting
 * live 3f2a...`. The columns are the shared stack's; a cluster with pools in stacks of their own ends with how many of
 * its pools are ready and what each one not ready is doing (`; pools 1/3 ready, spot CREATE_IN_PROGRESS, arm -`), so a
 * cluster whose shared stack is done while its pools still roll never reads as idle and unready for no reason.
 */
export function describe(r: StatusRow): string {
  const live = r.liveChecksum ? `live ${r.liveChecksum.slice(0, 12)}` : 'no live config';
  const message =
    r.reason && !['UpToDate', 'StackCreated', 'StackUpdated'].includes(r.reason) && r.message ? `: ${r.message}` : '';
  return `${r.cluster.padEnd(12)} ${(r.stackStatus ?? '-').padEnd(26)} Ready=${r.ready.padEnd(7)} ${(r.reason ?? '-').padEnd(18)} ${live}${message}${poolsText(r)}`;
}

function poolsText(r: StatusRow): string {
  const pools = r.pools ?? [];
  if (pools.length === 0) return '';
  const ready = r.status?.poolsReady ?? `${pools.filter((p) => p.ready === 'True').length}/${pools.length}`;
  const busy = pools.filter((p) => p.ready !== 'True').map((p) => `, ${p.pool} ${p.stackStatus ?? '-'}`);
  return `; pools ${ready} ready${busy.join('')}`;
}
