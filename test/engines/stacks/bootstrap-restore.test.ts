import { namedRoles, withoutResources } from '../../../lib/engines/stacks/bootstrap-restore';
import { synthesizeBootstrap } from '../../../lib/engines/synthesis/synthesize';
import { BOOTSTRAP_STACK_NAME, deployerRoleName, executionRoleName } from '../../../lib/core/naming';
import { tempDir } from '../../helpers/clusters';
import { deployBootstrapStack } from '../../../lib/engines/deploy/bootstrap-deploy';
import { sha256Hex } from '../../../lib/model/cloudconfig/checksum';
import { FakeCloudFormation } from '../../fakes/fake-cloudformation';
import { FakeClock, FakePublisher, RecordingLogger } from '../../fakes/fake-ports';

// Issue 32 item 17: the first of bootstrap's two deployments when a role was deleted behind CloudFormation's back
// leaves out the role and everything that refers to it, so that CloudFormation deletes them and the whole template
// creates them again. What refers to the roles is read from the synthesized bootstrap template itself.

const ACCOUNT = '222222222222';
const REGION = 'eu-west-1';
const TRUST = 'arn:aws:iam::111111111111:role/worker-stacks-daemon';

const body = synthesizeBootstrap(ACCOUNT, REGION, tempDir('bootstrap-restore'), { principals: [TRUST] }).templateBody;
type Tpl = { Resources: Record<string, { Type: string }>; Outputs?: Record<string, unknown> };
const parsed = (b: string) => JSON.parse(b) as Tpl;
const idOf = (roleName: string) => namedRoles(body).find((r) => r.roleName === roleName)!.logicalId;
const typesOf = (b: string) =>
  Object.entries(parsed(b).Resources)
    .map(([id, r]) => `${r.Type} ${id}`)
    .sort();

test('the named roles of the bootstrap template: the execution and the deployer role', () => {
  expect(namedRoles(body).map((r) => r.roleName)).toEqual([executionRoleName(REGION), deployerRoleName(REGION)]);
  expect(namedRoles('not: json')).toEqual([]);
});

test('without the deployer role: its policy and its output go too, nothing else', () => {
  const out = withoutResources(body, [idOf(deployerRoleName(REGION))]);
  const t = parsed(out.templateBody);
  expect(out.removed.map((id) => parsed(body).Resources[id].Type).sort()).toEqual([
    'AWS::IAM::Policy',
    'AWS::IAM::Role',
  ]);
  expect(Object.keys(t.Outputs ?? {}).sort()).toEqual(['ConfigBucketName', 'ExecutionRoleArn']);
  // the bucket policy names the deployer by its literal ARN, not a token: it stays
  expect(typesOf(out.templateBody)).toEqual(
    typesOf(body).filter((x) => !out.removed.some((id) => x.endsWith(` ${id}`))),
  );
  expect(typesOf(out.templateBody).some((x) => x.startsWith('AWS::S3::BucketPolicy'))).toBe(true);
  expect(JSON.stringify(t)).not.toContain(idOf(deployerRoleName(REGION)));
});

test("without the execution role: its policy, its output, and the deployer's policy that names its ARN by token", () => {
  const out = withoutResources(body, [idOf(executionRoleName(REGION))]);
  const t = parsed(out.templateBody);
  expect(out.removed).toHaveLength(3);
  expect(out.removed).toContain(idOf(executionRoleName(REGION)));
  expect(Object.keys(t.Outputs ?? {}).sort()).toEqual(['ConfigBucketName', 'DeployerRoleArn']);
  // the deployer role itself stays: only its policy referred to the execution role
  expect(t.Resources[idOf(deployerRoleName(REGION))]).toBeDefined();
  expect(JSON.stringify(t)).not.toContain(idOf(executionRoleName(REGION)));
});

test('references by DependsOn, Fn::Sub and the dotted Fn::GetAtt are followed too', () => {
  const t = {
    Resources: {
      A: { Type: 'AWS::IAM::Role', Properties: { RoleName: 'a' } },
      B: { Type: 'X', DependsOn: ['A'] },
      C: { Type: 'X', Properties: { V: { 'Fn::Sub': 'arn:${A.Arn}' } } },
      D: { Type: 'X', Properties: { V: { 'Fn::GetAtt': 'B.Arn' } } },
      E: { Type: 'X', Properties: { V: { 'Fn::Sub': '${AWS::Region}' } } },
    },
    Outputs: { O: { Value: { Ref: 'D' } }, P: { Value: { Ref: 'E' } } },
  };
  const out = withoutResources(JSON.stringify(t), ['A']);
  expect(out.removed).toEqual(['A', 'B', 'C', 'D']);
  expect(Object.keys(parsed(out.templateBody).Outputs ?? {})).toEqual(['P']);
});

describe('deployBootstrapStack (on the fake CloudFormation)', () => {
  function world(liveTemplate: string) {
    const cfn = new FakeCloudFormation({ clock: new FakeClock(), pollMs: 1000 });
    cfn.seed(BOOTSTRAP_STACK_NAME, { status: 'CREATE_COMPLETE', template: liveTemplate });
    const said: string[] = [];
    const asked: string[] = [];
    const deploy = (templateBody: string, gone: readonly string[]) =>
      deployBootstrapStack(
        { cfn, publisher: new FakePublisher() },
        { stackName: BOOTSTRAP_STACK_NAME, templateBody, assets: [], durationMs: 0 },
        `ws-${sha256Hex(templateBody).slice(0, 32)}`,
        {
          log: new RecordingLogger(),
          waitTimeoutMs: 600_000,
          changeSetTimeoutMs: 600_000,
          region: REGION,
          roles: {
            roleExists: async (name) => {
              asked.push(name);
              return !gone.includes(name);
            },
          },
          say: (line) => said.push(line),
        },
      );
    return { cfn, said, asked, deploy };
  }

  test('nothing missing: one GetRole per role, one deployment that changes nothing', async () => {
    const w = world(body);
    await w.deploy(body, []);
    expect(w.asked).toEqual([executionRoleName(REGION), deployerRoleName(REGION)]);
    expect(w.said).toEqual([]);
    expect(w.cfn.count('executeChangeSet')).toBe(0);
  });

  test('the deployer role gone: said, then two executions, the last with the whole template', async () => {
    const w = world(body);
    const final = await w.deploy(body, [deployerRoleName(REGION)]);
    expect(w.said).toEqual([`deployer role ${deployerRoleName(REGION)} is missing: restoring it`]);
    expect(w.cfn.count('executeChangeSet')).toBe(2);
    expect(final.status).toBe('UPDATE_COMPLETE');
    expect(await w.cfn.getTemplate(BOOTSTRAP_STACK_NAME)).toBe(body);
  });

  test('a deployer role renamed by --role-name is not "missing": CloudFormation replaces it anyway', async () => {
    const renamed = synthesizeBootstrap(ACCOUNT, REGION, tempDir('bootstrap-restore'), {
      principals: [TRUST],
      roleName: 'fleet-deployer',
    }).templateBody;
    const w = world(body);
    await w.deploy(renamed, [deployerRoleName(REGION, 'fleet-deployer')]);
    expect(w.asked).toEqual([executionRoleName(REGION)]);
    expect(w.said).toEqual([]);
    expect(w.cfn.count('executeChangeSet')).toBe(1);
  });
});
