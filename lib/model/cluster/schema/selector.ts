import { z } from 'zod';
import { cel, openApiRules, quoted } from './openapi';

/**
 * Kubernetes label selectors (metav1.LabelSelector): `matchLabels` and `matchExpressions` (In, NotIn, Exists,
 * DoesNotExist), ANDed. An empty selector matches every cluster, as in Kubernetes.
 */

const d = (text: string) => ({ description: text });

/** A label key: an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters. */
export const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** A label value: empty, or at most 63 characters of letters, digits, `-_.`, starting and ending alphanumeric. */
export const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

const KEY_RULE =
  "is not a label key (an optional DNS prefix and '/', then 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit)";
const VALUE_RULE =
  "is not a label value (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit)";

export function labelKeyProblem(k: string): string | undefined {
  if (!LABEL_KEY.test(k) || k.length > 317) return `${JSON.stringify(k)} ${KEY_RULE}`;
  const prefix = k.includes('/') ? k.slice(0, k.indexOf('/')) : '';
  if (prefix.length > 253) return `${JSON.stringify(k)}: the prefix is longer than 253 characters`;
  return undefined;
}

export function labelValueProblem(v: string): string | undefined {
  return LABEL_VALUE.test(v) ? undefined : `${JSON.stringify(v)} ${VALUE_RULE}`;
}

const labelKey = z.string().superRefine((k, ctx) => {
  const p = labelKeyProblem(k);
  if (p) ctx.addIssue({ code: 'custom', message: p, input: k });
});
const labelValue = z.string().superRefine((v, ctx) => {
  const p = labelValueProblem(v);
  if (p) ctx.addIssue({ code: 'custom', message: p, input: v });
});

// The CRD of the policy (lib/platform/kube/policy-crd.ts) states the same rules (a label key's 253-character prefix is left to
// validate: one regular expression cannot count it).
openApiRules.add(labelKey, {
  maxLength: 317,
  cel: [cel(`self.matches(${quoted(LABEL_KEY.source)})`, `'"' + self + ${quoted(`" ${KEY_RULE}`)}`)],
});
openApiRules.add(labelValue, {
  maxLength: 63,
  cel: [cel(`self.matches(${quoted(LABEL_VALUE.source)})`, `'"' + self + ${quoted(`" ${VALUE_RULE}`)}`)],
});

/** `metadata.labels` of a cluster object: Kubernetes label keys and values. */
export const LabelsSchema = z.record(labelKey, labelValue);

export const LabelSelectorRequirementSchema = z
  .strictObject({
    key: labelKey.meta(d('The label key.')),
    operator: z
      .enum(['In', 'NotIn', 'Exists', 'DoesNotExist'])
      .meta(d('In / NotIn need values; Exists / DoesNotExist take none.')),
    values: z.array(labelValue).max(32).optional().meta(d('Values for In and NotIn (at most 32).')),
  })
  .superRefine((r, ctx) => {
    const needs = r.operator === 'In' || r.operator === 'NotIn';
    if (needs && !r.values?.length)
      ctx.addIssue({
        code: 'custom',
        path: ['values'],
        message: `operator ${r.operator} needs at least one value`,
        input: r.values,
      });
    if (!needs && r.values?.length)
      ctx.addIssue({
        code: 'custom',
        path: ['values'],
        message: `operator ${r.operator} takes no values`,
        input: r.values,
      });
  });
openApiRules.add(LabelSelectorRequirementSchema, {
  cel: [
    cel(
      `!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)`,
      `'values: operator ' + self.operator + ' needs at least one value'`,
    ),
    cel(
      `self.operator in ['In', 'NotIn'] || !has(self.values) || size(self.values) == 0`,
      `'values: operator ' + self.operator + ' takes no values'`,
    ),
  ],
});

export const LabelSelectorSchema = z
  .strictObject({
    matchLabels: LabelsSchema.optional().meta(d('Every label here must be on the cluster with this value.')),
    matchExpressions: z
      .array(LabelSelectorRequirementSchema)
      .max(16)
      .optional()
      .meta(d('Every expression must hold (at most 16).')),
  })
  .meta(d('A Kubernetes label selector over metadata.labels of the cluster objects; empty matches every cluster.'));

export type LabelSelector = z.output<typeof LabelSelectorSchema>;
export type Labels = Readonly<Record<string, string>>;

export function matches(selector: LabelSelector | undefined, labels: Labels): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const ok =
      e.operator === 'Exists'
        ? has
        : e.operator === 'DoesNotExist'
          ? !has
          : e.operator === 'In'
            ? has && (e.values ?? []).includes(labels[e.key])
            : !has || !(e.values ?? []).includes(labels[e.key]);
    if (!ok) return false;
  }
  return true;
}

/** `ring=canary,tier in (a,b)` — for messages and `rollout status`. */
export function describeSelector(selector: LabelSelector | undefined): string {
  if (!selector) return 'every cluster';
  const parts = [
    ...Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(selector.matchExpressions ?? []).map((e) =>
      e.operator === 'Exists'
        ? e.key
        : e.operator === 'DoesNotExist'
          ? `!${e.key}`
          : `${e.key} ${e.operator === 'In' ? 'in' : 'notin'} (${(e.values ?? []).join(',')})`,
    ),
  ];
  return parts.length ? parts.join(',') : 'every cluster';
}
