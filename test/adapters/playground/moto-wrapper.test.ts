import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MOTO_WRAPPER } from '../../../lib/adapters/playground/moto-server';
import { tempDir } from '../../helpers/clusters';
import { Moto, startMoto } from '../../helpers/moto';
import { Json } from '../../helpers/json';

// tools/moto/server.py against plain moto 5.2.5: each patch it documents, shown by a request plain moto gets wrong.

let plain: Moto;
let wrapped: Moto;
let slow: Moto;
beforeAll(async () => {
  // Three servers at once, each the file's own (not the worker's shared ones): two of them are the wrapper.
  [plain, wrapped, slow] = await Promise.all([
    startMoto(30_000, {}, undefined, 'own'),
    startMoto(30_000, {}, {}, 'own'),
    startMoto(30_000, {}, { inProgressSeconds: 600 }, 'own'),
  ]);
}, 120_000);
// eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
afterAll(() => Promise.all([plain?.stop(), wrapped?.stop(), slow?.stop()]));

// Creates a stack through a CREATE change set (as worker-stacks does), optionally updates it, and reports what
// CloudFormation says: statuses, outputs, events and the execution status of the last change set.
const DEPLOY = `
elbv2 = boto3.client('elbv2', **_kw)
acm = boto3.client('acm', **_kw)
def run(name, template, kind):
    cs = cfn.create_change_set(StackName=name, ChangeSetName=f'{name}-{kind.lower()}', TemplateBody=json.dumps(template), ChangeSetType=kind)
    cfn.get_waiter('change_set_create_complete').wait(ChangeSetName=cs['Id'], WaiterConfig={'Delay': 1})
    try:
        cfn.execute_change_set(ChangeSetName=cs['Id'])
        err = None
    except Exception as e:  # a moto error, or plain moto's 500 page
        err = str(e)
    return cs['Id'], err
def report(name, cs_id, err):
    s = cfn.describe_stacks(StackName=name)['Stacks'][0]
    events = cfn.describe_stack_events(StackName=name)['StackEvents']
    return dict(error=err, status=s['StackStatus'], outputs={o['OutputKey']: o['OutputValue'] for o in s.get('Outputs', [])},
                events=[[e['LogicalResourceId'], e['ResourceStatus'], e.get('ResourceStatusReason')] for e in reversed(events)],
                execution=cfn.describe_change_set(ChangeSetName=cs_id)['ExecutionStatus'])
def network():
    vpc = ec2.create_vpc(CidrBlock='10.0.0.0/16')['Vpc']['VpcId']
    subnets = [ec2.create_subnet(VpcId=vpc, CidrBlock=f'10.0.{i}.0/24', AvailabilityZone=az)['Subnet']['SubnetId'] for i, az in enumerate(['eu-west-1a', 'eu-west-1b'])]
    return vpc, subnets
`;

const NLB = `${DEPLOY}
vpc, subnets = network()
cert = acm.request_certificate(DomainName='nlb.example.com')['CertificateArn']
protocols = ['TCP', 'UDP', 'TCP_UDP', 'TLS']
res = {'Lb': {'Type': 'AWS::ElasticLoadBalancingV2::LoadBalancer', 'Properties': {'Type': 'network', 'Scheme': 'internal', 'Subnets': subnets}}}
for i, p in enumerate(protocols):
    res[f'Tg{i}'] = {'Type': 'AWS::ElasticLoadBalancingV2::TargetGroup', 'Properties': {'Protocol': 'TCP' if p == 'TLS' else p, 'Port': 30000 + i, 'VpcId': vpc, 'HealthCheckProtocol': 'TCP', 'HealthCheckPort': '31000'}}
    listener = {'LoadBalancerArn': {'Ref': 'Lb'}, 'Protocol': p, 'Port': 7000 + i, 'DefaultActions': [{'Type': 'forward', 'TargetGroupArn': {'Ref': f'Tg{i}'}}]}
    if p == 'TLS':
        listener['Certificates'] = [{'CertificateArn': cert}]
    res[f'L{i}'] = {'Type': 'AWS::ElasticLoadBalancingV2::Listener', 'Properties': listener}
cs, err = run('nlb', {'Resources': res}, 'CREATE')
lbs = elbv2.describe_load_balancers()['LoadBalancers']
out = dict(error=err, types=[lb['Type'] for lb in lbs], listeners=sorted(l['Protocol'] for lb in lbs for l in elbv2.describe_listeners(LoadBalancerArn=lb['LoadBalancerArn'])['Listeners']))
`;

test('a network load balancer with TCP, UDP, TCP_UDP and TLS listeners: plain moto refuses the listeners, the wrapper creates them', () => {
  // GIVEN a template with an NLB (Type: network) and one listener per NLB protocol
  // WHEN plain moto and the wrapper each create it through a change set
  const before = plain.python<{ error: string | null }>(NLB);
  const after = wrapped.python<{ error: string | null; types: string[]; listeners: string[] }>(NLB);

  // THEN plain moto made an application load balancer and refused its TCP listener; the wrapper made the NLB
  expect(before.error).toContain("Listener protocol 'TCP' must be one of 'HTTP, HTTPS'");
  expect(after).toEqual({ error: null, types: ['network'], listeners: ['TCP', 'TCP_UDP', 'TLS', 'UDP'] });
});

const OUTPUTS_AND_PREFIX_LIST = `${DEPLOY}
vpc, subnets = network()
pl = ec2.create_managed_prefix_list(PrefixListName='bastions', MaxEntries=5, AddressFamily='IPv4', Entries=[{'Cidr': '192.0.2.0/24'}])['PrefixList']['PrefixListId']
template = {'Resources': {
  'Sg': {'Type': 'AWS::EC2::SecurityGroup', 'Properties': {'GroupDescription': 'nodes', 'VpcId': vpc}},
  'Ssh': {'Type': 'AWS::EC2::SecurityGroupIngress', 'Properties': {'GroupId': {'Fn::GetAtt': ['Sg', 'GroupId']}, 'IpProtocol': 'tcp', 'FromPort': 22, 'ToPort': 22, 'SourcePrefixListId': pl, 'Description': 'SSH from the bastions'}}},
  'Outputs': {'GroupId': {'Value': {'Fn::GetAtt': ['Sg', 'GroupId']}}}}
cs, err = run('sg', template, 'CREATE')
r = report('sg', cs, err)
perms = ec2.describe_security_groups(GroupIds=[r['outputs']['GroupId']])['SecurityGroups'][0]['IpPermissions'] if r['outputs'] else []
out = dict(status=r['status'], error=err, outputs=sorted(r['outputs']), prefixLists=[p['PrefixListId'] for perm in perms for p in perm.get('PrefixListIds', [])], pl=pl)
`;

test('a stack created from a change set lists its outputs, and a rule may come from a prefix list (plain moto: neither)', () => {
  // GIVEN a security group with an ingress rule from a managed prefix list, and an output
  // WHEN plain moto and the wrapper each create it through a change set
  const before = plain.python<{ status: string; error: string | null; outputs: string[] }>(OUTPUTS_AND_PREFIX_LIST);
  const after = wrapped.python<{
    status: string;
    error: string | null;
    outputs: string[];
    prefixLists: string[];
    pl: string;
  }>(OUTPUTS_AND_PREFIX_LIST);

  // THEN plain moto fails on the rule (and lists no output); the wrapper creates it, with the rule and the output
  expect(before.error).not.toBeNull();
  expect(before.outputs).toEqual([]);
  expect(after).toMatchObject({
    status: 'CREATE_COMPLETE',
    error: null,
    outputs: ['GroupId'],
    prefixLists: [after.pl],
  });
});

const IMAGE_ROLLBACK = `${DEPLOY}
vpc, subnets = network()
ami = ec2.describe_images(Owners=['amazon'])['Images'][0]['ImageId']
def template(image):
    return {'Resources': {
      'Lt': {'Type': 'AWS::EC2::LaunchTemplate', 'Properties': {'LaunchTemplateData': {'ImageId': image, 'InstanceType': 't3.micro'}}},
      'Asg': {'Type': 'AWS::AutoScaling::AutoScalingGroup', 'Properties': {'MinSize': '0', 'MaxSize': '1', 'VPCZoneIdentifier': subnets,
        'LaunchTemplate': {'LaunchTemplateId': {'Ref': 'Lt'}, 'Version': {'Fn::GetAtt': ['Lt', 'LatestVersionNumber']}}}}},
      'Outputs': {'Version': {'Value': {'Fn::GetAtt': ['Lt', 'LatestVersionNumber']}}}}
run('pool', template(ami), 'CREATE')
cs, err = run('pool', template(args), 'UPDATE')
r = report('pool', cs, err)
lt = [x['PhysicalResourceId'] for x in cfn.describe_stack_resources(StackName='pool')['StackResources'] if x['LogicalResourceId'] == 'Lt'][0]
r['versions'] = [v['LaunchTemplateData']['ImageId'] for v in ec2.describe_launch_template_versions(LaunchTemplateId=lt)['LaunchTemplateVersions']]
r['template'] = cfn.get_template(StackName='pool')['TemplateBody']['Resources']['Lt']['Properties']['LaunchTemplateData']['ImageId']
r['ami'] = ami
out = r
`;

test('an update to an image EC2 does not know rolls back as CloudFormation does: the group fails, the old template stays', () => {
  // GIVEN a launch template and an Auto Scaling group created from a known image
  // WHEN an update moves the launch template to an image EC2 does not know
  const r = wrapped.python<Json>(IMAGE_ROLLBACK, 'ami-0000000000000dead');

  // THEN the request succeeded, the stack ended UPDATE_ROLLBACK_COMPLETE, the change set EXECUTE_FAILED
  expect(r).toMatchObject({ error: null, status: 'UPDATE_ROLLBACK_COMPLETE', execution: 'EXECUTE_FAILED' });
  // AND the events are CloudFormation's: the operation started by the user, the group's failure with EC2's reason, the rollback
  const update = r.events.slice(r.events.findIndex((e: string[]) => e[1] === 'UPDATE_IN_PROGRESS'));
  expect(update).toEqual([
    ['pool', 'UPDATE_IN_PROGRESS', 'User Initiated'],
    [
      'Asg',
      'UPDATE_FAILED',
      "You must use a valid fully-formed launch template. The image id '[ami-0000000000000dead]' does not exist (Service: AutoScaling, Status Code: 400)",
    ],
    ['pool', 'UPDATE_ROLLBACK_IN_PROGRESS', 'The following resource(s) failed to update: [Asg].'],
    ['pool', 'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS', null],
    ['pool', 'UPDATE_ROLLBACK_COMPLETE', null],
  ]);
  // AND nothing of the update was applied: one launch template version, the old image in the stack's template
  expect(r.versions).toEqual([r.ami]);
  expect(r.template).toBe(r.ami);
  expect(r.outputs).toEqual({ Version: '1' });
});

const IN_PROGRESS = `${DEPLOY}
cs, err = run('slow', {'Resources': {'Sg': {'Type': 'AWS::EC2::SecurityGroup', 'Properties': {'GroupDescription': 'slow'}}}}, 'CREATE')
out = report('slow', cs, err)
`;

test('with --in-progress-seconds, an executed change set leaves its stack CREATE_IN_PROGRESS (started by the user) until the time passes', () => {
  // GIVEN the wrapper with 600 s of in-progress time
  // WHEN a change set is executed
  const r = slow.python<Json>(IN_PROGRESS);

  // THEN the request is answered, and the stack is in progress with nothing created yet
  expect(r).toMatchObject({ error: null, status: 'CREATE_IN_PROGRESS', execution: 'EXECUTE_IN_PROGRESS', outputs: {} });
  expect(r.events.at(-1)).toEqual(['slow', 'CREATE_IN_PROGRESS', 'User Initiated']);
});

test('another moto version is refused before anything starts: exit 2, naming both versions and the install command', () => {
  // GIVEN a python path whose moto is not the pinned one
  const fake = tempDir('fake-moto');
  fs.mkdirSync(path.join(fake, 'moto'));
  fs.writeFileSync(path.join(fake, 'moto', '__init__.py'), "__version__ = '5.1.0'\n");

  // WHEN the wrapper starts
  const r = spawnSync('python3', [MOTO_WRAPPER, '-p', '1'], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: fake },
  });

  // THEN it refuses, and says what to do
  expect(r.status).toBe(2);
  expect(r.stderr).toContain('moto 5.1.0 is installed, but these patches are for moto 5.2.5');
  expect(r.stderr).toContain('bash .ci/install-tools');
});

// A queue exported by one stack (first made without the export, then updated to add it) and imported by another;
// then an update of the first that drops the export.
const EXPORTS = `${DEPLOY}
queue = {'Q': {'Type': 'AWS::SQS::Queue', 'Properties': {}}}
plain_t = {'Resources': queue}
exported = {'Resources': queue, 'Outputs': {'Arn': {'Value': {'Fn::GetAtt': ['Q', 'Arn']}, 'Export': {'Name': 'shared:QueueArn'}}}}
importer = {'Resources': {'Q2': {'Type': 'AWS::SQS::Queue', 'Properties': {'Tags': [{'Key': 'from', 'Value': {'Fn::ImportValue': 'shared:QueueArn'}}]}}}}
run('shared', plain_t, 'CREATE')
run('shared', exported, 'UPDATE')
exports = [e['Name'] for e in cfn.list_exports()['Exports']]
imp_id, imp_err = run('importer', importer, 'CREATE')
drop_id, drop_err = run('shared', plain_t, 'UPDATE')
out = dict(exports=exports, importer=report('importer', imp_id, imp_err)['status'], drop=report('shared', drop_id, drop_err),
           after=[e['Name'] for e in cfn.list_exports()['Exports']])
`;

test('exports follow the outputs of change-set stacks, another stack imports them, and an imported export is not removed (plain moto: no export)', () => {
  // GIVEN / WHEN the same requests to plain moto and to the wrapper
  const p = plain.python<Json>(
    EXPORTS.replace("imp_id, imp_err = run('importer', importer, 'CREATE')", 'imp_id, imp_err = None, None').replace(
      "importer=report('importer', imp_id, imp_err)['status']",
      'importer=None',
    ),
  );
  const w = wrapped.python<Json>(EXPORTS);
  // THEN plain moto registers no export of a change-set stack; the wrapper does, the import resolves, and the update
  // that would drop the imported export fails and rolls back, as CloudFormation's does
  expect(p.exports).toEqual([]);
  expect(w.exports).toEqual(['shared:QueueArn']);
  expect(w.importer).toBe('CREATE_COMPLETE');
  expect(w.drop.status).toBe('UPDATE_ROLLBACK_COMPLETE');
  expect(w.drop.events.map((e: Json[]) => e[2]).join('\n')).toMatch(
    /Export shared:QueueArn cannot be deleted as it is in use by importer/,
  );
  expect(w.after).toEqual(['shared:QueueArn']);
});
