import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { WorkerPool, WorkerPoolProps } from '../../../lib/engines/constructs/worker-pool';
import { example } from '../../helpers/clusters';
import { synthCluster } from '../../helpers/synth';
import { Json } from '../../helpers/json';

function poolStack(overrides: Partial<WorkerPoolProps> = {}): Template {
  const stack = new Stack(new App(), 'S', { env: { account: '123456789012', region: 'eu-west-1' } });
  const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
    vpcId: 'vpc-12345678',
    availabilityZones: ['eu-west-1a'],
    privateSubnetIds: ['subnet-12345678'],
  });
  new WorkerPool(stack, 'Pool', {
    vpc,
    subnets: vpc.privateSubnets,
    instanceTypes: ['m6i.large'],
    machineImageId: 'ami-12345678',
    minSize: 1,
    maxSize: 3,
    userData: '{"ignition":{"version":"3.3.0"}}',
    configObjects: { bucketName: 'cfg-bucket', keyPrefix: 'clusters/c1/' },
    ...overrides,
  });
  return Template.fromStack(stack);
}

describe('launch template', () => {
  test('requires IMDSv2 with hop limit 1 and encrypts the root volume', () => {
    // GIVEN / WHEN
    const t = poolStack({ rootVolumeSizeGiB: 80 });
    // THEN
    t.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: Match.objectLike({
        MetadataOptions: Match.objectLike({ HttpTokens: 'required', HttpPutResponseHopLimit: 1 }),
        BlockDeviceMappings: [
          {
            DeviceName: '/dev/xvda',
            Ebs: { Encrypted: true, VolumeSize: 80, VolumeType: 'gp3', DeleteOnTermination: true },
          },
        ],
        ImageId: 'ami-12345678',
        UserData: { 'Fn::Base64': '{"ignition":{"version":"3.3.0"}}' },
      }),
    });
  });

  test('the group follows the latest launch template version and rolls with the given settings', () => {
    // GIVEN / WHEN
    const t = poolStack({
      rollingUpdate: { maxBatchSize: 2, minInstancesInService: 1, pauseTime: 'PT3M', waitOnResourceSignals: true },
    });
    // THEN
    t.hasResource('AWS::AutoScaling::AutoScalingGroup', {
      UpdatePolicy: {
        AutoScalingRollingUpdate: Match.objectLike({
          MaxBatchSize: 2,
          MinInstancesInService: 1,
          PauseTime: 'PT3M',
          WaitOnResourceSignals: true,
        }),
      },
      Properties: Match.objectLike({
        LaunchTemplate: {
          LaunchTemplateId: Match.anyValue(),
          Version: { 'Fn::GetAtt': [Match.stringLikeRegexp('LaunchTemplate'), 'LatestVersionNumber'] },
        },
      }),
    });
  });

  test("the group checks EC2 health only: no listener's target health can make it replace nodes", () => {
    // GIVEN / WHEN
    const t = poolStack();
    // THEN
    t.hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', {
      HealthCheckType: 'EC2',
      HealthCheckGracePeriod: 300,
    });
  });

  test('fixed instance tags go to instances and volumes through the launch template; the profile is exposed', () => {
    // GIVEN / WHEN
    const stack = new Stack(new App(), 'S', { env: { account: '123456789012', region: 'eu-west-1' } });
    const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
      vpcId: 'vpc-12345678',
      availabilityZones: ['eu-west-1a'],
      privateSubnetIds: ['subnet-12345678'],
    });
    const pool = new WorkerPool(stack, 'Pool', {
      vpc,
      subnets: vpc.privateSubnets,
      instanceTypes: ['m6i.large'],
      machineImageId: 'ami-12345678',
      minSize: 1,
      maxSize: 3,
      userData: 'x',
      configObjects: { bucketName: 'b', keyPrefix: 'clusters/c1/' },
      fixedInstanceTags: { 'kubernetes.io/cluster/c1': 'owned' },
    });
    const t = Template.fromStack(stack);
    // THEN
    const tag = Match.arrayWith([{ Key: 'kubernetes.io/cluster/c1', Value: 'owned' }]);
    t.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: Match.objectLike({
        TagSpecifications: [
          { ResourceType: 'instance', Tags: tag },
          { ResourceType: 'volume', Tags: tag },
        ],
      }),
    });
    expect(stack.resolve(pool.instanceProfile?.attrArn)).toEqual({
      'Fn::GetAtt': [expect.stringMatching(/^PoolLaunchTemplateProfile/), 'Arn'],
    });
  });

  test('desired capacity stays unset unless given, so a deploy never resets an autoscaler', () => {
    // GIVEN / WHEN / THEN
    poolStack().hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', {
      MinSize: '1',
      MaxSize: '3',
      DesiredCapacity: Match.absent(),
    });
    poolStack({ desiredCapacity: 2 }).hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', {
      DesiredCapacity: '2',
    });
  });

  test('several instance types give a mixed instances policy, first type preferred', () => {
    // GIVEN / WHEN
    const t = poolStack({ instanceTypes: ['m6i.large', 'm5.large'] });
    // THEN
    t.hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', {
      MixedInstancesPolicy: Match.objectLike({
        LaunchTemplate: Match.objectLike({ Overrides: [{ InstanceType: 'm6i.large' }, { InstanceType: 'm5.large' }] }),
        InstancesDistribution: Match.objectLike({ OnDemandAllocationStrategy: 'prioritized' }),
      }),
    });
    t.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: Match.objectLike({ InstanceType: Match.absent() }),
    });
  });
});

describe('instance role', () => {
  test('reads only its own cluster prefix and its own secrets, and signals only its own stack', () => {
    // GIVEN / WHEN
    const t = poolStack({ secretArns: ['arn:aws:secretsmanager:eu-west-1:123456789012:secret:c1/token-AbCdEf'] });
    // THEN
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          {
            Action: 's3:GetObject',
            Effect: 'Allow',
            Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::cfg-bucket/clusters/c1/*']] },
          },
          {
            Action: 'secretsmanager:GetSecretValue',
            Effect: 'Allow',
            Resource: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:c1/token-AbCdEf',
          },
          // the node's health signal, to its own stack only
          { Action: 'cloudformation:SignalResource', Effect: 'Allow', Resource: { Ref: 'AWS::StackId' } },
        ],
        Version: '2012-10-17',
      },
    });
    t.resourceCountIs('AWS::IAM::Policy', 1);
    t.hasResourceProperties('AWS::IAM::Role', { ManagedPolicyArns: Match.absent() });
  });
});

describe('legacy launch configuration', () => {
  test('is opt-in and keeps IMDSv2 (hop limit 1) and encryption', () => {
    // GIVEN / WHEN
    const t = poolStack({ legacyLaunchConfiguration: true });
    // THEN
    t.resourceCountIs('AWS::EC2::LaunchTemplate', 0);
    t.hasResourceProperties('AWS::AutoScaling::LaunchConfiguration', {
      MetadataOptions: { HttpTokens: 'required', HttpPutResponseHopLimit: 1 },
      BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: Match.objectLike({ Encrypted: true }) }],
    });
    poolStack().resourceCountIs('AWS::AutoScaling::LaunchConfiguration', 0);
  });
});

describe('misuse throws at once', () => {
  test.each<[string, Partial<WorkerPoolProps>, RegExp]>([
    ['min > max', { minSize: 5, maxSize: 2 }, /minSize 5 is greater than maxSize 2/],
    ['no instance type', { instanceTypes: [] }, /at least one instance type/],
    [
      'mixed types with a launch configuration',
      { legacyLaunchConfiguration: true, instanceTypes: ['a.large', 'b.large'] },
      /one instance type/,
    ],
    ['prefix without slash', { configObjects: { bucketName: 'b', keyPrefix: 'clusters/c1' } }, /must end with '\/'/],
  ])('%s', (_what, props, error) => {
    // GIVEN / WHEN / THEN
    expect(() => poolStack(props)).toThrow(error);
  });
});

test('every example stack boots its nodes with IMDSv2 required, hop limit 1, and encrypted volumes', () => {
  for (const name of ['prod-eu1', 'staging-us1']) {
    // GIVEN / WHEN
    const s = synthCluster(example(name));
    // THEN
    s.template.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: Match.objectLike({
        MetadataOptions: Match.objectLike({ HttpTokens: 'required', HttpPutResponseHopLimit: 1 }),
        BlockDeviceMappings: [Match.objectLike({ Ebs: Match.objectLike({ Encrypted: true }) })],
      }),
    });
  }
  synthCluster(example('edge-ap1')).template.hasResourceProperties('AWS::AutoScaling::LaunchConfiguration', {
    MetadataOptions: { HttpTokens: 'required', HttpPutResponseHopLimit: 1 },
  });
});

describe('no public IP unless asked', () => {
  test.each([
    ['launch template, default', {}, false],
    ['launch template, asked', { associatePublicIpAddress: true }, true],
  ])('%s', (_, overrides, expected) => {
    // GIVEN / WHEN
    const t = poolStack(overrides);
    // THEN the primary interface says it, and carries the node security group (no SecurityGroupIds beside it)
    const [lt] = Object.values(t.findResources('AWS::EC2::LaunchTemplate'));
    expect(lt.Properties.LaunchTemplateData.NetworkInterfaces).toEqual([
      {
        DeviceIndex: 0,
        AssociatePublicIpAddress: expected,
        Groups: [{ 'Fn::GetAtt': [expect.stringMatching(/SecurityGroup/), 'GroupId'] }],
      },
    ]);
    expect(lt.Properties.LaunchTemplateData.SecurityGroupIds).toBeUndefined();
  });

  test.each([
    ['launch configuration, default', {}, false],
    ['launch configuration, asked', { associatePublicIpAddress: true }, true],
  ])('%s', (_, overrides, expected) => {
    const t = poolStack({ legacyLaunchConfiguration: true, ...overrides });
    t.hasResourceProperties('AWS::AutoScaling::LaunchConfiguration', { AssociatePublicIpAddress: expected });
  });

  test('an object asks for public IPs with spec.network.associatePublicIpAddress, and only then gets them', () => {
    // GIVEN the example with the opt-in
    const asked = example('staging-us1');
    asked.spec.network.associatePublicIpAddress = true;
    // WHEN both are synthesized
    const publicIp = (c: typeof asked) =>
      Object.values<Json>(synthCluster(c).json.Resources).find((r) => r.Type === 'AWS::EC2::LaunchTemplate').Properties
        .LaunchTemplateData.NetworkInterfaces[0].AssociatePublicIpAddress;
    // THEN the object's answer is the template's
    expect([publicIp(example('staging-us1')), publicIp(asked)]).toEqual([false, true]);
  });

  test('every example node is launched without a public IP', () => {
    for (const name of ['prod-eu1', 'staging-us1', 'edge-ap1']) {
      const { json } = synthCluster(example(name));
      const resources = Object.values<Json>(json.Resources);
      const lt = resources.find((r) => r.Type === 'AWS::EC2::LaunchTemplate');
      const lc = resources.find((r) => r.Type === 'AWS::AutoScaling::LaunchConfiguration');
      expect([
        name,
        lt
          ? lt.Properties.LaunchTemplateData.NetworkInterfaces[0].AssociatePublicIpAddress
          : lc.Properties.AssociatePublicIpAddress,
      ]).toEqual([name, false]);
    }
  });
});
