import type { StackSummary } from '../../../model/ports/cloudformation-port';
import type { RenderedConfig } from '../../../model/cloudconfig/render';
import type { WorkerCluster } from '../../../model/cluster/schema';
import type { Logger } from '../../../core/logger';
import type { Outcome } from './outcomes';
import type { SynthesizedStack } from '../../synthesis/synthesize';

/*
 * What one reconcile finds, phase by phase. Each phase returns a new, frozen value that extends the one before; no
 * task assigns a field of anything. A task says in its type what it needs (its input) and what it adds (its output),
 * so a workflow that runs a task before what it needs does not compile (see Workflow in task.ts).
 */

/** Every reconcile starts here: the logger names the cluster, its generation and the live checksum. */
export interface Start {
  readonly log: Logger;
}

/** validate: the object, valid. */
export interface Validated extends Start {
  readonly cluster: WorkerCluster;
}

/** render: the node config, the inputs' fingerprint, and what changed since the config last applied. */
export interface Desired extends Validated {
  readonly config: RenderedConfig;
  readonly fingerprint: string;
  /** "kubelet flags changed" …; undefined when nothing was applied before or the config is unchanged. */
  readonly configChange?: string;
}

/** The live stack is not what was applied, or the recorded stack is gone: what and why. */
export interface Drift {
  readonly reason: 'Drifted' | 'StackDeleted';
  readonly message: string;
}

/** observe: the stack as it is, and the checksum it carries (read from the stack itself). */
export interface Observed extends Desired {
  /** Undefined: there is no stack. */
  readonly stack?: StackSummary;
  /** The config checksum the live stack carries (outputs, else its template); undefined when it says none. */
  readonly live?: string;
  readonly drift?: Drift;
  /** The stack was read alone (DescribeStacks by name) in this reconcile or just before it, not from a shared listing that may be older than our own write. */
  readonly described?: boolean;
}

/** What the fleet rollout gate decided for a roll (metrics per wave). */
export type RolloutNote = NonNullable<Outcome['rollout']>;

/** wait-for-wave: the gate let the roll start. */
export interface Gated {
  readonly rollout?: RolloutNote;
}

/** synthesize: the stack's template and assets. */
export interface Synthesized {
  readonly synth: SynthesizedStack;
}

/** change-set: the change set of these inputs, ready to execute (or executed before a restart). */
export interface ChangeSetReady {
  readonly changeSet:
    | {
        readonly name: string;
        readonly executed: false;
        /** The ClientRequestToken of its execution. */ readonly token: string;
      }
    /** Executed before a restart: only say so and look again. */
    | { readonly name: string; readonly executed: true };
}

/** Everything a reconcile may have found, as far as it got (hooks and the one error path read this). */
export type Found = Start & Partial<Observed & Gated & Synthesized & ChangeSetReady>;
