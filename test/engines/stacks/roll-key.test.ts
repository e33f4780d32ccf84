import {
  causesOf,
  describeRollChange,
  rollCauses,
  rollKeyOf,
  rollKeyOfBody,
} from '../../../lib/engines/stacks/roll-key';
import { Json } from '../../helpers/json';

/** A stack as worker-stacks writes it: a launch template, a group on it, and resources that never roll. */
function stack(change: (t: Json) => void = () => undefined): Json {
  const t: Json = {
    Resources: {
      LT: {
        Type: 'AWS::EC2::LaunchTemplate',
        Properties: {
          LaunchTemplateData: {
            ImageId: 'ami-1',
            UserData: 'config-1',
            SecurityGroupIds: [{ Ref: 'SG' }],
          },
        },
      },
      Group: {
        Type: 'AWS::AutoScaling::AutoScalingGroup',
        Properties: {
          MinSize: '1',
          MaxSize: '3',
          LaunchTemplate: { LaunchTemplateId: { Ref: 'LT' }, Version: { 'Fn::GetAtt': ['LT', 'LatestVersionNumber'] } },
          VPCZoneIdentifier: ['subnet-a'],
          Tags: [{ Key: 'team', Value: 'a', PropagateAtLaunch: true }],
        },
      },
      SG: { Type: 'AWS::EC2::SecurityGroup', Properties: { GroupDescription: 'nodes' } },
      Listener: { Type: 'AWS::ElasticLoadBalancingV2::Listener', Properties: { Port: 443 } },
    },
    Outputs: { ConfigChecksum: { Value: 'config-1' } },
  };
  change(t);
  return t;
}
const lt = (t: Json) => t.Resources.LT.Properties.LaunchTemplateData;
const group = (t: Json) => t.Resources.Group.Properties;

describe('rollKeyOf', () => {
  test.each<[string, (t: Json) => void, string]>([
    // what replaces the nodes
    ['a new image', (t) => (lt(t).ImageId = 'ami-2'), 'image'],
    ['new user data (the config checksum)', (t) => (lt(t).UserData = 'config-2'), 'config'],
    ['other subnets', (t) => (group(t).VPCZoneIdentifier = ['subnet-b']), 'subnets'],
    [
      'a release that writes the security groups on a network interface',
      (t) => {
        delete lt(t).SecurityGroupIds;
        lt(t).NetworkInterfaces = [{ DeviceIndex: 0, Groups: [{ Ref: 'SG' }] }];
      },
      'launch template: NetworkInterfaces, SecurityGroupIds',
    ],
    ['a placement group', (t) => (group(t).PlacementGroup = 'pg'), 'launch template: PlacementGroup'],
    // what replaces the group, its launch template or a resource the launch data reads (rk2)
    [
      'a new logical id of the group (a new group)',
      (t) => {
        t.Resources.Group2 = t.Resources.Group;
        delete t.Resources.Group;
      },
      'group replaced',
    ],
    [
      'the group named (AutoScalingGroupName replaces it)',
      (t) => (group(t).AutoScalingGroupName = 'g'),
      'group replaced',
    ],
    [
      'a new logical id of the launch template',
      (t) => {
        t.Resources.LT2 = t.Resources.LT;
        delete t.Resources.LT;
        group(t).LaunchTemplate = {
          LaunchTemplateId: { Ref: 'LT2' },
          Version: { 'Fn::GetAtt': ['LT2', 'LatestVersionNumber'] },
        };
      },
      'launch template replaced',
    ],
    [
      'the security group the launch data reads is replaced (GroupDescription)',
      (t) => (t.Resources.SG.Properties.GroupDescription = 'other'),
      'security group replaced',
    ],
    // what never does
    ['sizes', (t) => Object.assign(group(t), { MinSize: '2', MaxSize: '9', DesiredCapacity: '4' }), ''],
    ['tags of the group', (t) => (group(t).Tags = []), ''],
    ['a listener', (t) => (t.Resources.Listener.Properties.Port = 8443), ''],
    [
      'a rule of the security group (updated in place)',
      (t) =>
        (t.Resources.SG.Properties.SecurityGroupIngress = [
          { IpProtocol: 'tcp', FromPort: 1, ToPort: 1, CidrIp: '10.0.0.0/8' },
        ]),
      '',
    ],
    ['the tags of the launch template itself', (t) => (t.Resources.LT.Properties.TagSpecifications = []), ''],
    ['outputs', (t) => (t.Outputs.ConfigChecksum.Value = 'x'), ''],
    [
      'the key order of the launch template data',
      (t) => (t.Resources.LT.Properties.LaunchTemplateData = { ...lt(t) }),
      '',
    ],
  ])('%s: %j', (_what, change, cause) => {
    // GIVEN
    const before = rollKeyOf(stack())!;
    // WHEN
    const after = rollKeyOf(stack(change))!;
    // THEN
    expect(after.key !== before.key).toBe(cause !== '');
    expect(describeRollChange(before, after)).toBe(cause);
  });

  test('a mixed instances policy: its overrides are instance types, its distribution is capacity', () => {
    // GIVEN a group on a mixed instances policy
    const mixed = (types: string[], onDemand: number) =>
      stack((t) => {
        const spec = group(t).LaunchTemplate;
        delete group(t).LaunchTemplate;
        group(t).MixedInstancesPolicy = {
          LaunchTemplate: {
            LaunchTemplateSpecification: spec,
            Overrides: types.map((InstanceType) => ({ InstanceType })),
          },
          InstancesDistribution: { OnDemandPercentageAboveBaseCapacity: onDemand },
        };
      });
    const base = rollKeyOf(mixed(['m6i.large'], 100));
    // WHEN / THEN
    expect(rollCauses(base, rollKeyOf(mixed(['m6i.large', 'm5.large'], 100)))).toEqual(['instance types']);
    expect(rollCauses(base, rollKeyOf(mixed(['m6i.large'], 0)))).toEqual(['capacity']);
    // the launch template's data is read through the policy too
    expect(rollCauses(base, rollKeyOf(stack((t) => (lt(t).ImageId = 'x'))))).toContain('image');
  });

  test('a launch configuration is read in place, as a launch template is', () => {
    // GIVEN a group on a launch configuration
    const legacy = (image: string) => ({
      Resources: {
        LC: { Type: 'AWS::AutoScaling::LaunchConfiguration', Properties: { ImageId: image, InstanceType: 't3.large' } },
        Group: {
          Type: 'AWS::AutoScaling::AutoScalingGroup',
          Properties: { LaunchConfigurationName: { Ref: 'LC' }, MinSize: '1', MaxSize: '2' },
        },
      },
    });
    // WHEN / THEN
    expect(rollCauses(rollKeyOf(legacy('ami-1')), rollKeyOf(legacy('ami-2')))).toEqual(['image']);
    expect(rollKeyOf(legacy('ami-1'))!.parts).toHaveProperty(['launchConfiguration.InstanceType']);
  });

  test('a launch template outside the stack: its reference (a pinned version) is what changes', () => {
    // GIVEN a group on a launch template of another stack
    const outside = (version: string) =>
      stack((t) => {
        delete t.Resources.LT;
        group(t).LaunchTemplate = { LaunchTemplateId: 'lt-0123', Version: version };
      });
    // WHEN / THEN
    expect(rollCauses(rollKeyOf(outside('1')), rollKeyOf(outside('2')))).toEqual(['launch template']);
  });

  test('two groups in one stack are told apart by logical id', () => {
    // GIVEN a second group on the same launch template
    const two = (image: string) =>
      stack((t) => {
        t.Resources.Other = JSON.parse(JSON.stringify(t.Resources.Group));
        lt(t).ImageId = image;
      });
    // WHEN
    const key = rollKeyOf(two('ami-1'))!;
    // THEN
    expect(Object.keys(key.parts)).toEqual(
      expect.arrayContaining(['Group.launchTemplate.ImageId', 'Other.launchTemplate.ImageId']),
    );
    expect(describeRollChange(key, rollKeyOf(two('ami-2')))).toBe('image');
  });

  test.each<[string, string | undefined]>([
    ['no template', undefined],
    ['not JSON', '{'],
    ['no group', JSON.stringify({ Resources: { Q: { Type: 'AWS::SQS::Queue' } } })],
  ])('%s has no roll key', (_what, body) => {
    // GIVEN / WHEN / THEN
    expect(rollKeyOfBody(body)).toBeUndefined();
  });

  test('the key is the same for the same template, byte for byte, and names its recipe', () => {
    // GIVEN / WHEN
    const a = rollKeyOfBody(JSON.stringify(stack()));
    const b = rollKeyOf(stack());
    // THEN
    expect(a).toEqual(b);
    expect(a!.key).toMatch(/^rk2:[0-9a-f]{16}$/);
  });

  test('causes are named once each, in a fixed order', () => {
    // GIVEN / WHEN / THEN
    expect(causesOf(['VPCZoneIdentifier', 'launchTemplate.ImageId', 'launchTemplate.UserData', 'x.ImageId'])).toEqual([
      'config',
      'image',
      'subnets',
    ]);
  });
});
