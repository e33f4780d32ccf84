import { Moto, startMoto } from '../helpers/moto';

// The jest worker's shared moto servers (test/environment/shared-moto.js, test/helpers/moto.ts): the next file to
// take one finds nothing the last one left behind. Two users one after the other here stand for two files of a worker.

let held: Moto[] = [];
afterEach(() => Promise.all(held.splice(0).map((m) => m.stop())));
async function take(...args: Parameters<typeof startMoto>): Promise<Moto> {
  const moto = await startMoto(...args);
  held.push(moto);
  return moto;
}
async function giveBack(moto: Moto): Promise<void> {
  held = held.filter((m) => m !== moto);
  await moto.stop();
}

// A stack with a security group and an export: what a change set still in progress would bring into the next world.
const TEMPLATE = {
  Resources: { Sg: { Type: 'AWS::EC2::SecurityGroup', Properties: { GroupDescription: 'left behind' } } },
  Outputs: { SgId: { Value: { Ref: 'Sg' }, Export: { Name: 'left-behind-sg' } } },
};

/** Leaves a bucket, a VPC, a registered image and a complete stack behind; `pending`: a stack whose change set is executing. */
const LEAVE_BEHIND = `
amazon = len(ec2.describe_images(Owners=['amazon'])['Images'])
vpcs = len(ec2.describe_vpcs()['Vpcs'])
s3.create_bucket(Bucket='left-behind', CreateBucketConfiguration={'LocationConstraint': 'eu-west-1'})
ec2.create_vpc(CidrBlock='10.9.0.0/16')
ec2.register_image(Name='left-behind', RootDeviceName='/dev/xvda')
cfn.create_stack(StackName='done', TemplateBody=json.dumps({'Resources': {'Sg': {'Type': 'AWS::EC2::SecurityGroup', 'Properties': {'GroupDescription': 'done'}}}}))
if args['pending']:
    cs = cfn.create_change_set(StackName='pending', ChangeSetName='pending', TemplateBody=json.dumps(args['template']), ChangeSetType='CREATE')
    cfn.get_waiter('change_set_create_complete').wait(ChangeSetName=cs['Id'], WaiterConfig={'Delay': 1})
    cfn.execute_change_set(ChangeSetName=cs['Id'])
out = dict(amazon=amazon, vpcs=vpcs, stacks={s['StackName']: s['StackStatus'] for s in cfn.describe_stacks()['Stacks']})
`;

/** What the server holds now (DescribeStacks first: the wrapper settles what is due before every CloudFormation request). */
const WHAT_IS_THERE = `
stacks = [s['StackName'] for s in cfn.describe_stacks()['Stacks']]
out = dict(
    stacks=stacks,
    buckets=[b['Name'] for b in s3.list_buckets()['Buckets']],
    vpcs=len(ec2.describe_vpcs()['Vpcs']),
    amazon=len(ec2.describe_images(Owners=['amazon'])['Images']),
    mine=[i['Name'] for i in ec2.describe_images(Owners=['self'])['Images']],
    groups=sorted(g['Description'] for g in ec2.describe_security_groups()['SecurityGroups'] if g['Description'] != 'default VPC security group'),
    exports=[e['Name'] for e in cfn.list_exports()['Exports']],
)
`;

interface Left {
  amazon: number;
  vpcs: number;
  stacks: Record<string, string>;
}

/** What a reset server holds: moto's own default VPC and images (as many as the last user found), nothing else. */
function resetWorld(left: Left): Record<string, unknown> {
  return { stacks: [], buckets: [], vpcs: left.vpcs, amazon: left.amazon, mine: [], groups: [], exports: [] };
}

test("the plain server the next user takes is the same process, reset: none of the last user's buckets, VPCs, images or stacks", async () => {
  // GIVEN a user that leaves things behind
  const first = await take();
  const left = first.python<Left>(LEAVE_BEHIND, { pending: false });
  expect(left.stacks).toEqual({ done: 'CREATE_COMPLETE' });
  await giveBack(first);

  // WHEN the next user takes a plain server
  const second = await take();

  // THEN it is the same server (not a new process that would be empty anyway), holding nothing of the first user's,
  // with moto's own images and default VPC back
  expect(second.port).toBe(first.port);
  const there = second.python<Record<string, unknown>>(WHAT_IS_THERE);
  expect(there).toEqual(resetWorld(left));
  expect(left.amazon).toBeGreaterThan(0);
});

test("the wrapper the next user takes forgets the last user's change sets in progress and keeps the next user's in-progress seconds", async () => {
  // GIVEN a user of the wrapper whose change set is still executing (1 s in progress) when it leaves
  const first = await take(30_000, {}, { inProgressSeconds: 1 });
  const left = first.python<Left>(LEAVE_BEHIND, { pending: true, template: TEMPLATE });
  expect(left.stacks).toEqual({ done: 'CREATE_COMPLETE', pending: 'CREATE_IN_PROGRESS' });
  await giveBack(first);

  // WHEN the next user takes the wrapper with 30 s in progress, and the first user's change set falls due
  const second = await take(30_000, {}, { inProgressSeconds: 30 });
  expect(second.port).toBe(first.port);
  await new Promise((r) => setTimeout(r, 1500));

  // THEN nothing of the first user's is there, not even what its change set would have made on settling
  const there = second.python<Record<string, unknown>>(WHAT_IS_THERE);
  expect(there).toEqual(resetWorld(left));
  // AND its change sets stay in progress for its 30 s, as the server says and as a stack shows
  const settings = await fetch(`${second.endpoint}/moto-api/worker-stacks/settings`);
  expect(await settings.json()).toEqual({ inProgressSeconds: 30 });
  // (a setting that is not a number of seconds is refused, and changes nothing)
  const refused = await fetch(`${second.endpoint}/moto-api/worker-stacks/settings`, {
    method: 'POST',
    body: JSON.stringify({ inProgressSeconds: -1 }),
  });
  expect([refused.status, await refused.text()]).toEqual([400, expect.stringContaining('0 or more')]);
  expect(await (await fetch(`${second.endpoint}/moto-api/worker-stacks/settings`)).json()).toEqual({
    inProgressSeconds: 30,
  });
  const status = second.python<string>(
    `
cs = cfn.create_change_set(StackName='mine', ChangeSetName='mine', TemplateBody=json.dumps(args), ChangeSetType='CREATE')
cfn.get_waiter('change_set_create_complete').wait(ChangeSetName=cs['Id'], WaiterConfig={'Delay': 1})
cfn.execute_change_set(ChangeSetName=cs['Id'])
out = cfn.describe_stacks(StackName='mine')['Stacks'][0]['StackStatus']
`,
    TEMPLATE,
  );
  expect(status).toBe('CREATE_IN_PROGRESS');
});

test('a file holds one shared server of a kind at a time: a second one, at once or later, is refused, with what to do', async () => {
  // WHEN the file asks for the shared plain server twice at once
  const both = await Promise.allSettled([take(), take()]);
  // THEN one is handed out, the other refused (never a second process the worker would lose track of)
  expect(both.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  const refusal = /holds the shared moto server already: stop\(\) it first, or start its own/;
  expect(both.find((r) => r.status === 'rejected')).toEqual(
    expect.objectContaining({ reason: expect.objectContaining({ message: expect.stringMatching(refusal) }) }),
  );
  // AND so is a later one while the file still holds it
  await expect(startMoto()).rejects.toThrow(refusal);
});
