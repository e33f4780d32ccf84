import { z } from 'zod';
import { issueToProblems } from '../../../lib/model/cluster/validate';

// A value that no alternative of a union takes: zod says only "Invalid input"; a problem must keep its rule (issue 32,
// item 10: `validate` printed "Invalid input" for a bad CIDR where the API server named the rule).

const problems = (schema: z.ZodType, value: unknown) => {
  const r = schema.safeParse(value, { reportInput: true });
  return r.success ? [] : r.error.issues.flatMap((i) => issueToProblems('clusters/x.yaml', i));
};

test.each([
  [
    'a value of no alternative type',
    z.union([z.number(), z.string()]),
    true,
    'true is a boolean, expected a number or a string',
  ],
  [
    'a value of one alternative type that breaks its rule',
    z.object({ a: z.union([z.number().max(3), z.string().max(2)]) }),
    { a: 'abcd' },
    '"abcd" has 4 characters, at most 2 allowed',
  ],
])('%s: the rule, not "Invalid input"', (_what, schema, value, message) => {
  // WHEN the value is checked
  const found = problems(schema, value);

  // THEN the one problem says the rule
  expect(found.map((p) => p.message)).toEqual([message]);
});
