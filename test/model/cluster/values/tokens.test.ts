import { tokenShape } from '../../../../lib/model/cluster/values/tokens';
import { BadRow, expectRefused } from '../../../helpers/bad-input';

/**
 * CDK-token-shaped strings (issue 21): a cluster object is data, so a `${Token[...]}` in any string would be resolved
 * by synthesis into a CloudFormation expression, or crash it without naming the file. Refused in every string, map
 * key and number, with the field path.
 */

const TOKEN = '${Token[AWS.AccountId.4]}';
const RULE = /^has the CDK token marker "\$\{Token\[" ?; synthesis would resolve it into a CloudFormation expression/;

const rows: BadRow[] = [
  {
    what: 'a rule description',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[0].description = `ssh ${TOKEN}`),
    path: 'spec.securityGroupRules[0].description',
    message: RULE,
  },
  {
    what: 'a health-check path',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[0].healthCheck.path = `/${TOKEN}`),
    path: 'spec.listeners[0].healthCheck.path',
    message: RULE,
  },
  {
    what: 'an annotation',
    example: 'prod-eu1',
    mutate: (r) => (r.metadata.annotations = { note: TOKEN }),
    path: 'metadata.annotations.note',
    message: RULE,
  },
  {
    what: 'a list token',
    example: 'prod-eu1',
    mutate: (r) => (r.metadata.annotations = { list: '#{Token[TOKEN.12]}' }),
    path: 'metadata.annotations.list',
    message: /^has the CDK token marker "#\{Token\["/,
  },
  {
    what: 'a stringified number token',
    example: 'prod-eu1',
    mutate: (r) => (r.metadata.annotations = { n: '-1.8881545897087626e+289' }),
    path: 'metadata.annotations.n',
    message: /^has the CDK token marker "-1\.8881545897087626e\+289"/,
  },
  {
    what: 'a map key',
    example: 'prod-eu1',
    mutate: (r) => (r.metadata.annotations = { [TOKEN]: 'x' }),
    path: `metadata.annotations[${JSON.stringify(TOKEN)}]`,
    message: /^the key has the CDK token marker/,
  },
];

describe('a CDK token shape anywhere in the object is refused', () => {
  test.each(rows)('$what', (row) => expectRefused(row));
});

describe('token shapes', () => {
  test.each([
    [TOKEN, true],
    ['#{Token[TOKEN.3]}', true],
    ['-1.888154589708762e+289', true],
    [-1.8881545897087516e289, true],
    ['Token[x] in plain words', false],
    ['$ { [ ] } are fine apart', false],
    [443, false],
    [-1, false],
  ])('%s: %s', (v, refused) => {
    expect(tokenShape(v) !== undefined).toBe(refused);
  });
});
