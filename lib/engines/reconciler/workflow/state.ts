import type { StackSummary } from '../../../model/ports/cloudformation-port';
import type { RenderedConfig } from '../../../model/cloudconfig/render';
import type { WorkerCluster } from '../../../model/cluster/schema/schema';
import type { Logger } from '../../../core/logger';
import type { Outcome } from './outcomes';
import type { SynthesizedStack } from '../../synthesis/synthesize';
import type { RollKey } from '../../stacks/roll-key';

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

/** Whether this change replaces the stack's nodes: its roll key as the object asks and as it is live, and why. */
export interface Roll {
  /** The roll key of the template this reconcile would apply (undefined: the stack holds no group). */
  readonly desired?: RollKey;
  /** The roll key of the live stack's template (undefined: no stack yet, or it holds no group). */
  readonly live?: RollKey;
  /** The change replaces nodes: a stack exists and the two keys differ. */
  readonly rolls: boolean;
  /** Why, in an operator's words ("image", "release: launchTemplate.NetworkInterfaces"); empty when it does not roll. */
  readonly cause: string;
}

/** roll-key: what the change does to the nodes (lib/engines/stacks/roll-key.ts), before any gate decides on it. */
export interface RollKeyed {
  readonly roll: Roll;
  /** The synthesis the desired roll key was read from, when this reconcile made one: the change set reuses it. */
  readonly synth?: SynthesizedStack;
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
export type Found = Start & Partial<Observed & RollKeyed & Gated & Synthesized & ChangeSetReady>;
