/**
 * Rule signals-sent: a pool that waits on CloudFormation signals must have a node config that sends one. Every format
 * signals today (eks-al2023 by its own signal part, Bottlerocket by its settings.cloudformation); the rule stays for a
 * format that declares it sends none, so it is proven here with one that does.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { derive } from '../../../lib/model/cluster/derive';
import { FORMATS } from '../../../lib/model/cloudconfig/formats';
import { NODEADM } from '../../../lib/model/cloudconfig/nodeadm';
import { CONFIG_FORMATS } from '../../../lib/model/cloudconfig/node-config';
import { REPO, TEMPLATES } from '../../helpers/clusters';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

const FILE = 'clusters/eks-us2.yaml';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects are reshaped freely
function deriveWith(mutate: (raw: any) => void = () => undefined) {
  const raw = parse(fs.readFileSync(path.join(REPO, FILE), 'utf8'));
  mutate(raw);
  return derive(raw, { file: FILE, templateSource: defaultTemplates(), templates: TEMPLATES });
}

afterEach(() => jest.restoreAllMocks());

test('every format sends a signal today', () => {
  // THEN
  expect(CONFIG_FORMATS.filter((f) => FORMATS[f].sendsNoSignal)).toEqual([]);
});

test('an AL2023 (eks-al2023) pool that waits on signals is accepted: its nodes send one', () => {
  // GIVEN the EKS example, whose AL2023 pool waits on signals (the default)
  // WHEN
  const d = deriveWith((raw) => (raw.spec.pools[0].rollingUpdate.waitOnResourceSignals = true));
  // THEN
  expect(d.problems).toBeUndefined();
});

describe('a format that sends no signal', () => {
  beforeEach(() => jest.replaceProperty(FORMATS, 'nodeadm', { ...NODEADM, sendsNoSignal: true }));

  test('is refused on a pool that waits on signals, naming the file, the field and the rule', () => {
    // WHEN
    const d = deriveWith();
    // THEN
    expect(d.stage).toBe('render');
    const p = d.problems?.find((x) => x.path === 'spec.pools[0].rollingUpdate.waitOnResourceSignals');
    expect(p?.file).toBe(FILE);
    expect(p?.message).toContain('sends no CloudFormation signal');
    expect(p?.message).toContain('set rollingUpdate.waitOnResourceSignals: false');
    expect(p?.message).toMatch(/ \(rule signals-sent\)$/);
    expect(p?.rule).toBe('signals-sent');
  });

  test('is accepted on a pool that does not wait', () => {
    // WHEN
    const d = deriveWith((raw) => (raw.spec.pools[0].rollingUpdate.waitOnResourceSignals = false));
    // THEN
    expect(d.problems).toBeUndefined();
  });
});
