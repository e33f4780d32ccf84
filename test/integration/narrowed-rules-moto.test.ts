import { getCondition } from '../../lib/model/cluster/schema/status';
import { poolStackName, workerStackName } from '../../lib/core/naming';
import { Json } from '../helpers/json';
import {
  AWS_FLAGS,
  cli,
  pooledMotoCluster,
  stackActivity,
  startWorld,
  stateFile,
  stopWorld,
  World,
  writeCluster,
} from './harness';

// Issue 23 item 4 end to end: a security-group rule narrowed to one pool, through the real CLI (file store) against moto
// (the wrapper). The spot pool's stack gets a security group of its own with the rule, its launch template gives its
// nodes both groups, and the shared group does not get the rule; made cluster-wide, the rule moves to the shared group
// and spot's own group is deleted.

const NAME = 'moto-narrow';
const SHARED = workerStackName(NAME);
const SPOT = poolStackName(NAME, 'spot');
const RULE = { description: 'spot gossip among spot nodes', protocol: 'tcp', port: 7946, source: { self: true } };
let world: World;

beforeAll(async () => {
  world = await startWorld({ inProgressSeconds: 2 });
}, 120_000);
afterAll(() => stopWorld(world));

interface Groups {
  /** The groups of the newest version of the spot stack's launch template. */
  readonly launchTemplate: string[];
  /** The shared stack's node group. */
  readonly shared: string;
  /** Every security group moto has, with its inbound ports and whether the source is the group itself. */
  readonly rules: Record<string, { port: number; self: boolean }[]>;
}

/** What EC2 (moto) has: the spot launch template's groups, the shared node group, every group's inbound rules. */
function groups(): Groups {
  return world.moto.python<Groups>(
    `
shared_stack, spot_stack = args
def resources(stack):
    return cfn.describe_stack_resources(StackName=stack)['StackResources']
lt = [r['PhysicalResourceId'] for r in resources(spot_stack) if r.get('ResourceType') == 'AWS::EC2::LaunchTemplate'][0]
key = dict(LaunchTemplateId=lt) if lt.startswith('lt-') else dict(LaunchTemplateName=lt)
vs = ec2.describe_launch_template_versions(**key)['LaunchTemplateVersions']
newest = max(vs, key=lambda v: v['VersionNumber'])['LaunchTemplateData']
nics = newest.get('NetworkInterfaces') or [{}]
outputs = cfn.describe_stacks(StackName=shared_stack)['Stacks'][0]['Outputs']
shared = [o['OutputValue'] for o in outputs if o['OutputKey'] == 'WorkerSecurityGroupId'][0]
rules = {}
for g in ec2.describe_security_groups()['SecurityGroups']:
    rules[g['GroupId']] = [dict(port=p.get('FromPort', -1), self=any(u['GroupId'] == g['GroupId'] for u in p.get('UserIdGroupPairs', []))) for p in g.get('IpPermissions', [])]
out = dict(launchTemplate=nics[0].get('Groups', newest.get('SecurityGroupIds', [])), shared=shared, rules=rules)
`,
    [SHARED, SPOT],
  );
}

test('a rule narrowed to the spot pool: its own group on its nodes, deleted again when the narrowing goes', async () => {
  // GIVEN two pools, and a rule narrowed to spot
  writeCluster(
    world,
    pooledMotoCluster(world, NAME, 'spot', (raw) => raw.spec.securityGroupRules.push({ ...RULE, pools: ['spot'] })),
  );
  // WHEN the reconciler runs
  const first = await cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);
  expect({ code: first.code, err: first.err }).toEqual({ code: 0, err: expect.any(String) });

  // THEN the cluster is Ready 2/2; spot's nodes carry the shared group and one more, which alone takes the rule (from
  // itself); the shared group has no such rule
  let status: Json = stateFile(world, NAME).status;
  expect(getCondition(status, 'Ready')?.status).toBe('True');
  expect(status.poolsReady).toBe('2/2');
  const before = groups();
  expect(before.launchTemplate).toHaveLength(2);
  expect(before.launchTemplate[0]).toBe(before.shared);
  const own = before.launchTemplate[1];
  expect(before.rules[own]).toEqual([{ port: 7946, self: true }]);
  expect(before.rules[before.shared].map((r) => r.port)).not.toContain(7946);
  const sharedEvents = (await stackActivity(world, SHARED)).events;

  // WHEN the rule is made cluster-wide instead
  writeCluster(
    world,
    pooledMotoCluster(world, NAME, 'spot', (raw) => raw.spec.securityGroupRules.push(RULE)),
  );
  const second = await cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);
  expect({ code: second.code, err: second.err }).toEqual({ code: 0, err: expect.any(String) });

  // THEN spot's nodes carry the shared group alone, spot's own group is gone, and the shared group has the rule
  status = stateFile(world, NAME).status;
  expect(getCondition(status, 'Ready')?.status).toBe('True');
  const after = groups();
  expect(after.launchTemplate).toEqual([after.shared]);
  expect(Object.keys(after.rules)).not.toContain(own);
  expect(after.rules[after.shared]).toContainEqual({ port: 7946, self: true });
  expect((await stackActivity(world, SHARED)).events).toBeGreaterThan(sharedEvents);
}, 300_000);

test('a rule from the load balancer narrowed to spot: the shared stack exports the balancer’s group, spot’s rule names it', async () => {
  // GIVEN two pools behind a load balancer, and a health-check port from the balancer narrowed to spot
  const name = 'moto-narrow-lb';
  const withBalancer = (narrowed: boolean) =>
    pooledMotoCluster(world, name, 'spot', (raw) => {
      raw.spec.loadBalancer = { scheme: 'internal', allowedCidrs: ['10.0.0.0/8'] };
      raw.spec.listeners = [{ name: 'ingress-http', port: 80, nodePort: 30080, pools: ['spot'] }];
      if (narrowed)
        raw.spec.securityGroupRules.push({
          description: 'metrics from the load balancer to spot',
          protocol: 'tcp',
          port: 30900,
          source: { loadBalancer: true },
          pools: ['spot'],
        });
    });
  writeCluster(world, withBalancer(true));
  // WHEN the reconciler runs
  const first = await cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);
  expect({ code: first.code, err: first.err }).toEqual({ code: 0, err: expect.any(String) });

  // THEN Ready 2/2; the export exists, and spot's own group takes 30900 from the balancer's group
  expect(getCondition(stateFile(world, name).status, 'Ready')?.status).toBe('True');
  const seen = balancer(name);
  expect(seen.exported).toBe(seen.balancerGroup);
  expect(seen.fromBalancer).toEqual([30900]);

  // WHEN the rule goes (the export with it: the spot stack stops importing it first)
  writeCluster(world, withBalancer(false));
  const second = await cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);
  expect({ code: second.code, err: second.err }).toEqual({ code: 0, err: expect.any(String) });
  const third = await cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);
  expect(third.code).toBe(0);

  // THEN no export is left, no group takes 30900, and the cluster is Ready
  expect(getCondition(stateFile(world, name).status, 'Ready')?.status).toBe('True');
  expect(balancer(name)).toMatchObject({ exported: null, fromBalancer: [] });
}, 300_000);

/** The balancer's group export, the balancer's group (the shared stack's), the ports any group takes from it. */
function balancer(name: string): { exported: string | null; balancerGroup: string; fromBalancer: number[] } {
  return world.moto.python(
    `
name = args
exports = {e['Name']: e['Value'] for e in cfn.list_exports()['Exports']}
res = cfn.describe_stack_resources(StackName='WorkerStack-' + name)['StackResources']
lb = [r['PhysicalResourceId'] for r in res if r.get('LogicalResourceId', '').startswith('ListenersSecurityGroup')][0]
ports = [p.get('FromPort') for g in ec2.describe_security_groups()['SecurityGroups'] for p in g.get('IpPermissions', []) if any(u['GroupId'] == lb for u in p.get('UserIdGroupPairs', [])) and p.get('FromPort') == 30900]
out = dict(exported=exports.get('WorkerStack-' + name + ':LoadBalancerSecurityGroupId'), balancerGroup=lb, fromBalancer=ports)
`,
    name,
  );
}
