import * as fs from 'node:fs';
import * as path from 'node:path';
import { diffTemplate, ResourceImpact } from '@aws-cdk/cloudformation-diff';
import { replacesResource } from '../../../lib/engines/stacks/replacing-properties';
import { tempDir } from '../../helpers/clusters';
import { run } from '../../helpers/tools';

/** The generated table of replacing properties is the installed specification's, as cloudformation-diff reads it. */
const SCRIPT = path.join(__dirname, '..', '..', '..', 'scripts', 'replacing-properties.js');
const TABLE = path.join(__dirname, '..', '..', '..', 'lib', 'engines', 'stacks', 'replacing-properties-table.json');

test('the committed table is what the script generates from the installed @aws-cdk/cloudformation-diff', () => {
  // WHEN
  const r = run('node', [SCRIPT, '--check']);
  // THEN (on a difference it names the command that regenerates the table)
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
});

test('--check fails on a table that differs, and names the command that regenerates it', () => {
  // GIVEN the table with one replacing property missing
  const copy = path.join(tempDir('replacing'), 'table.json');
  fs.writeFileSync(copy, fs.readFileSync(TABLE, 'utf8').replace('"ImageId",', ''));
  // WHEN
  const r = run('node', [SCRIPT, '--check', '--table', copy]);
  // THEN
  expect(r.status).toBe(1);
  expect(r.stderr).toContain('run `node scripts/replacing-properties.js`');
});

test.each([
  ['AWS::AutoScaling::LaunchConfiguration', 'ImageId', true],
  ['AWS::AutoScaling::LaunchConfiguration', 'SecurityGroups', true],
  ['AWS::EC2::LaunchTemplate', 'LaunchTemplateName', true],
  ['AWS::EC2::LaunchTemplate', 'LaunchTemplateData', false],
  ['AWS::AutoScaling::AutoScalingGroup', 'MaxSize', false],
  ['AWS::EC2::SecurityGroup', 'GroupDescription', true],
  ['AWS::EC2::SecurityGroup', 'SecurityGroupIngress', false],
  ['AWS::No::SuchType', 'Anything', false],
])('%s %s: replaces is %s, as the diff engine says', (type, property, replaces) => {
  // GIVEN the diff of a one-resource template whose property changes
  const one = (value: string) => ({ Resources: { R: { Type: type, Properties: { [property]: value } } } });
  const updates = diffTemplate(one('a'), one('b')).resources.get('R').propertyUpdates;
  const impact = (updates[property] as (typeof updates)[string] | undefined)?.changeImpact;
  // THEN
  expect(impact === ResourceImpact.WILL_REPLACE || impact === ResourceImpact.MAY_REPLACE).toBe(replaces);
  expect(replacesResource(type, property)).toBe(replaces);
});
