import { RuleId } from '../../lib/model/cluster/rules/rule-registry';
import { validateCluster } from '../../lib/model/cluster/validate';
import { rawExample, TEMPLATES } from './clusters';

/** One row of a bad-input table: a valid example with one thing broken, and what the refusal must say. */
export interface BadRow {
  readonly what: string;
  readonly example: 'prod-eu1' | 'staging-us1' | 'edge-ap1';
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows reshape the raw object into invalid forms
  readonly mutate: (raw: any) => void;
  readonly path: string;
  readonly message: RegExp;
  /** The named rule that refuses it (lib/model/cluster/rules/rule-registry.ts): the message ends with its id. @default none: a field's own rule */
  readonly rule?: RuleId;
  /** Other field paths the same mistake also (rightly) reports. */
  readonly alsoAt?: readonly string[];
}

/** The shared body of every bad-input table. */
export function expectRefused({ example, mutate, path, message, rule, alsoAt }: BadRow): void {
  // GIVEN a valid example with one thing broken
  const raw = rawExample(example);
  mutate(raw);
  const file = `clusters/${example}.yaml`;

  // WHEN it is validated
  const result = validateCluster(raw, { file, templates: TEMPLATES });

  // THEN there is no cluster, and the problem names the field and the rule, and nothing else is reported
  expect(result.cluster).toBeUndefined();
  expect(result.problems).toContainEqual({
    file,
    path,
    message: expect.stringMatching(rule === undefined ? message : ending(message, ` (rule ${rule})`)),
    ...(rule === undefined ? {} : { rule }),
  });
  expect(new Set(result.problems.map((p) => p.path))).toEqual(new Set([path, ...(alsoAt ?? [])]));
}

/** `words` followed by exactly `suffix` at the end: the row's pattern of the rule's words, then the rule's id. */
function ending(words: RegExp, suffix: string): RegExp {
  const escaped = suffix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const body = words.source.endsWith('$') ? words.source.slice(0, -1) : `${words.source}.*`;
  return new RegExp(`${body}${escaped}$`, words.flags);
}
