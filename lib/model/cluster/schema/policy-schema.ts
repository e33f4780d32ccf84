import { z } from 'zod';
import { cel, fmt, openApiRules, quoted } from './openapi';
import { API_VERSION } from './schema';
import { dnsLabel } from './rules';
import { DURATION_PATTERN, parseDuration } from './duration';
import { LabelSelectorSchema } from './selector';
import { MaintenanceWindowSchema } from './windows';

/**
 * The WorkerRolloutPolicy object: how a change that rolls nodes moves through the fleet. Ordered waves of clusters
 * (by label selector), each with its concurrency, soak time and maintenance windows; clusters no wave selects form a
 * last wave (`remainder`). Like WorkerCluster, the zod schema is the source of truth (types, validation, later the CRD).
 */

export const POLICY_KIND = 'WorkerRolloutPolicy';
/** Name of the last wave, of the clusters no wave selects, unless `spec.remainder.name` says otherwise. */
export const REMAINDER_WAVE = 'remainder';

const d = (text: string) => ({ description: text });
/** Waves of one policy: a bound for the CRD's CEL cost estimate, far above any real rollout. */
export const MAX_WAVES = 32;

const PERCENT = /^([1-9][0-9]?|100)%$/;
const NOT_CONCURRENCY = 'is not a count (a whole number 1-10000) or a percentage ("1%"-"100%")';

/** `3` (clusters) or `"10%"` (of the wave's clusters, rounded up, at least 1). */
export const MaxConcurrentSchema = z.union([z.number(), z.string()]).superRefine((v, ctx) => {
  const ok = typeof v === 'number' ? Number.isInteger(v) && v >= 1 && v <= 10_000 : PERCENT.test(v);
  if (!ok) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(v)} ${NOT_CONCURRENCY}`, input: v });
});
// The CRD: an int-or-string whose integer is bounded and whose string is a percentage, with validate's message.
openApiRules.add(MaxConcurrentSchema, {
  intOrString: true,
  maxLength: 4,
  cel: [
    cel(
      `type(self) == string ? string(self).matches(${quoted(PERCENT.source)}) : (int(self) >= 1 && int(self) <= 10000)`,
      // format() reads every % of its template: the percent signs of the message are doubled there.
      `type(self) == string ? '"' + string(self) + ${quoted(`" ${NOT_CONCURRENCY}`)} : ${fmt(`%d ${NOT_CONCURRENCY.replace(/%/g, '%%')}`, 'int(self)')}`,
    ),
  ],
});

const soakSchema = z.string().superRefine((v, ctx) => {
  const ms = parseDuration(v);
  if (ms === undefined)
    ctx.addIssue({
      code: 'custom',
      message: `${JSON.stringify(v)} is not a duration (such as 0s, 30m, 2h, 1h30m)`,
      input: v,
    });
  else if (ms > 30 * 24 * 3_600_000) ctx.addIssue({ code: 'custom', message: `${v} is longer than 30 days`, input: v });
});
openApiRules.add(soakSchema, {
  maxLength: 32,
  cel: [
    cel(`self.matches(${quoted(DURATION_PATTERN)})`, `'"' + self + '" is not a duration (such as 0s, 30m, 2h, 1h30m)'`),
    cel(
      `!self.matches(${quoted(DURATION_PATTERN)}) || duration(self) <= duration('720h')`,
      `self + ' is longer than 30 days'`,
    ),
  ],
});
const soak = soakSchema.meta(
  d(
    'How long every cluster of the wave must have been settled on the new config before the next wave starts it. @default 0s',
  ),
);

const waveSettings = {
  maxConcurrent: MaxConcurrentSchema.default('25%').meta(
    d(
      'Clusters of the wave rolling at the same time: a count, or a percentage of the wave (rounded up, at least 1). @default "25%"',
    ),
  ),
  soak: soak.default('0s'),
  maintenanceWindows: z
    .array(MaintenanceWindowSchema)
    .max(16)
    .default([])
    .meta(
      d(
        "Rolls of the wave's clusters start only inside one of these (a cluster's own spec.rollout.maintenanceWindows take precedence). @default [] (any time)",
      ),
    ),
};

const maxConcurrentRolls = z.number().superRefine((v, ctx) => {
  if (!Number.isInteger(v) || v < 1)
    ctx.addIssue({ code: 'custom', message: `${v} is not a whole number of at least 1`, input: v });
});
openApiRules.add(maxConcurrentRolls, {
  type: 'integer',
  cel: [cel('self >= 1', fmt('%d is not a whole number of at least 1', 'self'))],
});

export const WaveSchema = z
  .strictObject({
    name: dnsLabel.meta(d('Wave name, unique in the policy; shown in conditions, `rollout status` and metrics.')),
    selector: LabelSelectorSchema.meta(
      d('The clusters of this wave (a cluster belongs to the first wave that selects it).'),
    ),
    ...waveSettings,
  })
  .meta(d('One wave: its clusters roll only after every earlier wave is settled and soaked.'));

export const RemainderSchema = z
  .strictObject({
    name: dnsLabel.default(REMAINDER_WAVE).meta(d(`@default ${REMAINDER_WAVE}`)),
    ...waveSettings,
  })
  .meta(d('The last wave: the clusters of the policy that no wave selects.'));

export const RolloutPolicySpecSchema = z
  .strictObject({
    clusterSelector: LabelSelectorSchema.optional().meta(
      d('The clusters this policy governs; several policies must not select the same cluster. @default every cluster'),
    ),
    waves: z
      .array(WaveSchema)
      .min(1)
      .max(MAX_WAVES)
      .meta(d(`Ordered waves, first to last (at most ${MAX_WAVES}).`)),
    remainder: RemainderSchema.default({
      name: REMAINDER_WAVE,
      maxConcurrent: '25%',
      soak: '0s',
      maintenanceWindows: [],
    }),
    maxConcurrentRolls: maxConcurrentRolls
      .optional()
      .meta(
        d(
          "Clusters of this policy rolling at the same time, over every wave (the daemon's --concurrency still bounds all stacks in progress). @default unbounded",
        ),
      ),
    haltOnFailure: z
      .boolean()
      .default(true)
      .meta(
        d(
          'A failed roll (a rollback, a stall) in a wave stops every roll of that wave and the later ones until it is fixed. @default true',
        ),
      ),
    paused: z
      .boolean()
      .default(false)
      .meta(
        d(
          'No roll of these clusters starts (rolls under way finish); `worker-stacks rollout pause|resume` sets it. @default false',
        ),
      ),
  })
  .superRefine((spec, ctx) => {
    const seen = new Map<string, number>();
    const names = [...spec.waves.map((w) => w.name), spec.remainder.name];
    names.forEach((n, i) => {
      if (seen.has(n))
        ctx.addIssue({
          code: 'custom',
          path: i < spec.waves.length ? ['waves', i, 'name'] : ['remainder', 'name'],
          message: `${JSON.stringify(n)} is already the name of waves[${seen.get(n)}]; wave names must be unique`,
          input: n,
        });
      else seen.set(n, i);
    });
  });

export const RolloutPolicySchema = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(POLICY_KIND),
  metadata: z.strictObject({
    name: dnsLabel.meta(d('Policy name (the file name without .yaml in the file store).')),
    generation: z.number().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
  spec: RolloutPolicySpecSchema,
});

export type RolloutPolicy = z.output<typeof RolloutPolicySchema>;
export type Wave = z.output<typeof WaveSchema>;
export type WaveSettings = Pick<Wave, 'name' | 'maxConcurrent' | 'soak' | 'maintenanceWindows'>;

/** The concurrency of a wave of `size` clusters: a count, or a percentage rounded up (at least 1). */
export function waveConcurrency(max: number | string, size: number): number {
  if (typeof max === 'number') return max;
  return Math.max(1, Math.ceil((size * Number(max.slice(0, -1))) / 100));
}
