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
  /** Other field paths the same mistake also (rightly) reports. */
  readonly alsoAt?: readonly string[];
}

/** The shared body of every bad-input table. */
export function expectRefused({ example, mutate, path, message, alsoAt }: BadRow): void {
  // GIVEN a valid example with one thing broken
  const raw = rawExample(example);
  mutate(raw);
  const file = `clusters/${example}.yaml`;

  // WHEN it is validated
  const result = validateCluster(raw, { file, templates: TEMPLATES });

  // THEN there is no cluster, and the problem names the field and the rule, and nothing else is reported
  expect(result.cluster).toBeUndefined();
  expect(result.problems).toContainEqual({ file, path, message: expect.stringMatching(message) });
  expect(new Set(result.problems.map((p) => p.path))).toEqual(new Set([path, ...(alsoAt ?? [])]));
}
