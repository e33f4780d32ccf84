import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { parseClusterYaml } from '../../model/cluster/load';
import { clusterFiles, readClusterFile } from '../../platform/files/cluster-files';
import { issueToProblems } from '../../model/cluster/validate';
import { Problem, WorkerStacksError } from '../../core/errors';
import { PolicyEvent, PolicyRef } from './policy-events';
import { POLICY_KIND, RolloutPolicy, RolloutPolicySchema } from '../../model/cluster/schema/policy-schema';

/** A validated policy and where it lives (for messages). */
export interface LoadedPolicy {
  readonly policy: RolloutPolicy;
  readonly source: string;
  /**
   * The Kubernetes store's namespace of the policy: it governs the clusters of that namespace only (as a
   * PodDisruptionBudget selects the pods of its own). None in the file store: every cluster. @default none
   */
  readonly namespace?: string;
}

/** A problem of a policy object; in the Kubernetes store, with its namespace (whose rolls it holds). */
export interface PolicyProblem extends Problem {
  readonly namespace?: string;
}

export interface LoadedPolicies {
  readonly policies: readonly LoadedPolicy[];
  /**
   * Every problem of every policy object at once (file: field path: rule). While there is one, no roll starts (in the
   * Kubernetes store: no roll of a cluster of the problem's namespace).
   */
  readonly problems: readonly PolicyProblem[];
}

/**
 * Where WorkerRolloutPolicy objects live: `<clusters>/rollout-policies/*.yaml` in the file store (FilePolicySource),
 * `workerrolloutpolicies.worker-stacks.io` custom resources in the Kubernetes store (KubernetesPolicySource). One
 * contract suite runs against both (test/engines/rollout/policy-source-contract.ts). createPolicySource picks one from --store.
 */
export interface RolloutPolicySource {
  /** Every policy, validated (level-based: what is there now; a watching source may answer from its watch cache). */
  load(): Promise<LoadedPolicies>;
  /** Sets or clears spec.paused of one policy (`worker-stacks rollout pause|resume`); an unknown name is a WorkerStacksError. */
  setPaused(name: string, paused: boolean): Promise<void>;
  /** Calls `onChange` when a policy may have changed (a resume, say), so held clusters are looked at at once. Returns a stop function. */
  watch?(onChange: () => void): () => void;
  /** Puts an event on the policy object (lib/engines/rollout/policy-events.ts). @default none: the daemon's JSON log has it */
  emit?(policy: PolicyRef, event: PolicyEvent): Promise<void>;
  /** Waits for the events in flight. @default nothing to wait for */
  flush?(): Promise<void>;
  /** Releases connections and watches. @default nothing to release */
  close?(): void;
}

/** The directory of policy files beside the cluster objects. */
export const POLICY_DIR = 'rollout-policies';

/** Validates one parsed policy object. Pure: every problem at once, with the file and field path. */
export function validatePolicy(raw: unknown, file: string): { policy?: RolloutPolicy; problems: Problem[] } {
  const parsed = RolloutPolicySchema.safeParse(raw, { reportInput: true });
  const problems = parsed.success ? [] : parsed.error.issues.flatMap((i) => issueToProblems(file, i));
  const name = (raw as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
  const expected = path.basename(file).replace(/\.ya?ml$/, '');
  if (/\.ya?ml$/.test(file) && typeof name === 'string' && name !== expected)
    problems.push({
      file,
      path: 'metadata.name',
      message: `${JSON.stringify(name)} must match the file name (${expected})`,
    });
  const kind = (raw as { kind?: unknown } | undefined)?.kind;
  if (kind !== undefined && kind !== POLICY_KIND && problems.every((p) => p.path !== 'kind'))
    problems.push({ file, path: 'kind', message: `${JSON.stringify(kind)} is not ${POLICY_KIND}` });
  problems.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return parsed.success && problems.length === 0 ? { policy: parsed.data, problems } : { problems };
}

export interface FilePolicySourceProps {
  /** The cluster objects' directory; policies are in its `rollout-policies/` subdirectory. */
  readonly clustersDir: string;
  /** Directory file names are shown relative to. @default process.cwd() */
  readonly relativeTo?: string;
}

/** The file store's policies: one `WorkerRolloutPolicy` per `<clusters>/rollout-policies/<name>.yaml`. No directory: no policy. */
export class FilePolicySource implements RolloutPolicySource {
  public readonly dir: string;
  private readonly relativeTo: string;

  constructor(props: FilePolicySourceProps) {
    this.dir = path.resolve(props.clustersDir, POLICY_DIR);
    this.relativeTo = props.relativeTo ?? process.cwd();
  }

  // The port is asynchronous (the Kubernetes source is); here the work is synchronous, and a throw stays a rejection.
  public load(): Promise<LoadedPolicies> {
    return new Promise((resolve) => resolve(this.loadSync()));
  }

  /** The same, synchronously (`worker-stacks validate`). */
  public loadSync(): LoadedPolicies {
    if (!fs.existsSync(this.dir)) return { policies: [], problems: [] };
    const policies: LoadedPolicy[] = [];
    const problems: Problem[] = [];
    for (const file of clusterFiles(this.dir)) {
      const shown = this.shown(file);
      const read = readClusterFile(file, { shown });
      if (read.problem) {
        problems.push(read.problem);
        continue;
      }
      const parsed = parseClusterYaml(read.text, shown);
      if (parsed.problems.length) {
        problems.push(
          ...parsed.problems.map((p) => ({ ...p, message: p.message.replace('WorkerCluster', POLICY_KIND) })),
        );
        continue;
      }
      const r = validatePolicy(parsed.raw, shown);
      problems.push(...r.problems);
      if (r.policy) policies.push({ policy: r.policy, source: shown });
    }
    return { policies, problems };
  }

  public setPaused(name: string, paused: boolean): Promise<void> {
    return new Promise((resolve) => {
      this.setPausedSync(name, paused);
      resolve();
    });
  }

  private setPausedSync(name: string, paused: boolean): void {
    const file = fs.existsSync(this.dir)
      ? clusterFiles(this.dir).find((f) => path.basename(f).replace(/\.ya?ml$/, '') === name)
      : undefined;
    if (!file)
      throw new WorkerStacksError(`no rollout policy ${name} in ${this.shown(this.dir)}`, {
        hint: 'run worker-stacks rollout status to see the policies',
      });
    const read = readClusterFile(file, { shown: this.shown(file) });
    if (read.problem)
      throw new WorkerStacksError(`${read.problem.file}: ${read.problem.message}`, {
        hint: 'a policy is a small regular YAML file',
      });
    // Edited as a document: comments and layout stay; only spec.paused changes.
    const doc = parseDocument(read.text);
    if (paused) doc.setIn(['spec', 'paused'], true);
    else doc.deleteIn(['spec', 'paused']);
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, doc.toString());
    fs.renameSync(tmp, file);
  }

  public watch(onChange: () => void): () => void {
    // The directory itself, when it exists; a policy directory made later is picked up by the periodic resync.
    if (!fs.existsSync(this.dir)) return () => undefined;
    let timer: NodeJS.Timeout | undefined;
    const w = fs.watch(this.dir, { persistent: false }, (_e, f) => {
      if (!/\.ya?ml$/.test(f ?? '')) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(onChange, 200);
    });
    return () => {
      if (timer) clearTimeout(timer);
      w.close();
    };
  }

  private shown(file: string): string {
    return path.relative(this.relativeTo, file) || file;
  }
}
