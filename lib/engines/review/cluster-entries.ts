import { workerStackName } from '../../core/naming';
import { WorkerStackSnapshot } from './assembly';
import { ClusterReview } from './model';
import { verdictLine } from './verdict';

/* The entries of clusters that have no two synthesized stacks to diff: not synthesized, or refused on a side. */

/** A cluster whose object, templates and code are byte-identical at base and head: unchanged by construction. */
export function notSynthesized(name: string): ClusterReview {
  return {
    name,
    stackName: workerStackName(name),
    status: 'unchanged',
    verdict: verdictLine({
      status: 'unchanged',
      stackName: workerStackName(name),
      resources: [],
      rollingUpdate: null,
      capacity: null,
    }),
    synthesized: false,
    renamedFrom: null,
    rollReasons: [],
    rollingUpdate: null,
    capacity: null,
    checksum: { base: null, head: null },
    template: null,
    config: null,
    problems: { base: [], head: [] },
    notes: [],
    pools: [],
  };
}

/** An object invalid at base and gone at head. */
export function removedInvalid(name: string, problems: ClusterReview['problems']): ClusterReview {
  const stackName = workerStackName(name);
  return {
    ...notSynthesized(name),
    status: 'removed',
    synthesized: true,
    problems,
    verdict: verdictLine({ status: 'removed', stackName, resources: [], rollingUpdate: null, capacity: null }),
    notes: [
      `${name} was invalid at the base revision; if an older revision deployed ${stackName}, it stays until someone deletes it explicitly.`,
    ],
  };
}

/** An object the head's app refuses: nothing of it can deploy; its problems are the finding. */
export function invalidCluster(
  name: string,
  old: WorkerStackSnapshot | undefined,
  problems: ClusterReview['problems'],
): ClusterReview {
  const stackName = workerStackName(name);
  return {
    name,
    stackName,
    status: 'invalid',
    verdict: verdictLine({
      status: 'invalid',
      stackName,
      resources: [],
      rollingUpdate: null,
      capacity: null,
      problems,
    }),
    synthesized: true,
    renamedFrom: null,
    rollReasons: [],
    rollingUpdate: null,
    capacity: null,
    checksum: { base: old?.config?.checksum ?? null, head: null },
    template: null,
    config: null,
    problems,
    pools: [],
    notes: [
      `Nothing of ${stackName} can be synthesized or deployed from the working tree until ${problems.head.length === 1 ? 'this problem is' : 'these problems are'} fixed; \`worker-stacks validate\` lists them.`,
    ],
  };
}
