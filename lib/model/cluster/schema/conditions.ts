import { z } from 'zod';

/** The conditions of a cluster's status (Kubernetes API conventions): their types, their schema, and how one is set. */

/** Condition types. Alert on Stalled=True: it needs a human. Degraded=True is a retried failure or a transient error. */
export const CONDITION_TYPES = ['Ready', 'Progressing', 'Degraded', 'Stalled'] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];
export type ConditionStatus = 'True' | 'False' | 'Unknown';

const d = (text: string) => ({ description: text });

export const ConditionSchema = z.strictObject({
  type: z.enum(CONDITION_TYPES),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z
    .string()
    .regex(/^[A-Z][A-Za-z0-9]*$/)
    .meta(d('CamelCase, machine-readable.')),
  message: z.string().meta(d('For people: what happened and what to do.')),
  lastTransitionTime: z.string().meta(d('ISO 8601; changes only when status changes.')),
  observedGeneration: z.number().int().min(0),
});

export type Condition = z.output<typeof ConditionSchema>;

export interface ConditionInput {
  readonly type: ConditionType;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
}

/** Sets one condition; keeps lastTransitionTime when the status did not change. Returns a new list, sorted by type. */
export function setCondition(
  conditions: readonly Condition[],
  c: ConditionInput,
  generation: number,
  now: Date,
): Condition[] {
  const old = conditions.find((x) => x.type === c.type);
  const lastTransitionTime = old && old.status === c.status ? old.lastTransitionTime : now.toISOString();
  const next: Condition = { ...c, lastTransitionTime, observedGeneration: generation };
  return [...conditions.filter((x) => x.type !== c.type), next].sort((a, b) => (a.type < b.type ? -1 : 1));
}

export function setConditions(
  conditions: readonly Condition[],
  cs: readonly ConditionInput[],
  generation: number,
  now: Date,
): Condition[] {
  return cs.reduce<Condition[]>((acc, c) => setCondition(acc, c, generation, now), [...conditions]);
}
