import { Match } from 'aws-cdk-lib/assertions';
import { OUTPUTS } from '../../../lib/engines/stacks/worker-stack';
import { example, variant } from '../../helpers/clusters';
import { idsOfType, synthCluster } from '../../helpers/synth';
import { Json } from '../../helpers/json';

describe('what a control plane needs from a worker stack', () => {
  test('outputs: the worker security group, the instance role ARN, the instance profile name and ARN', () => {
    // GIVEN / WHEN
    const s = synthCluster(example('prod-eu1'));
    // THEN
    const [sg] = idsOfType(s.json, 'AWS::EC2::SecurityGroup').filter((id) => id.startsWith('PoolSecurityGroup'));
    const [role] = idsOfType(s.json, 'AWS::IAM::Role');
    const [profile] = idsOfType(s.json, 'AWS::IAM::InstanceProfile');
    s.template.hasOutput(OUTPUTS.securityGroupId, { Value: { 'Fn::GetAtt': [sg, 'GroupId'] } });
    s.template.hasOutput(OUTPUTS.instanceRoleArn, { Value: { 'Fn::GetAtt': [role, 'Arn'] } });
    s.template.hasOutput(OUTPUTS.instanceProfileName, { Value: { Ref: profile } });
    s.template.hasOutput(OUTPUTS.instanceProfileArn, { Value: { 'Fn::GetAtt': [profile, 'Arn'] } });
    // the profile the launch template boots with is the one the outputs name
    s.template.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: Match.objectLike({ IamInstanceProfile: { Arn: { 'Fn::GetAtt': [profile, 'Arn'] } } }),
    });
  });

  test('a launch configuration stack names its own profile', () => {
    // GIVEN / WHEN
    const s = synthCluster(variant('staging-us1', (raw) => (raw.spec.pool.legacyLaunchConfiguration = true)));
    // THEN
    const [profile] = idsOfType(s.json, 'AWS::IAM::InstanceProfile');
    s.template.hasOutput(OUTPUTS.instanceProfileName, { Value: { Ref: profile } });
    s.template.hasResourceProperties('AWS::AutoScaling::LaunchConfiguration', { IamInstanceProfile: { Ref: profile } });
  });

  test('kubernetes.io/cluster/<name>: owned on the instances (group tags propagated at launch, launch template), their volumes and the node security group only', () => {
    // GIVEN / WHEN
    const s = synthCluster(example('prod-eu1'));
    // THEN
    const owned = { Key: 'kubernetes.io/cluster/prod-eu1', Value: 'owned' };
    s.template.hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', {
      Tags: Match.arrayWith([{ ...owned, PropagateAtLaunch: true }]),
    });
    s.template.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: Match.objectLike({
        TagSpecifications: [
          { ResourceType: 'instance', Tags: Match.arrayWith([owned]) },
          { ResourceType: 'volume', Tags: Match.arrayWith([owned]) },
        ],
      }),
    });
    const tagged = Object.entries<Json>(s.json.Resources)
      .filter(([, r]) => JSON.stringify(r.Properties?.Tags ?? []).includes('kubernetes.io/cluster/'))
      .map(([id, r]) => `${r.Type} ${id.replace(/[0-9A-F]{8}$/, '')}`);
    // The load balancer's own security group must not be taken for the nodes' by the cloud provider.
    expect(tagged.sort()).toEqual([
      'AWS::AutoScaling::AutoScalingGroup PoolGroupASG',
      'AWS::EC2::SecurityGroup PoolSecurityGroup',
    ]);
  });
});

describe('the load balancer', () => {
  test('uses spec.loadBalancer.subnetIds when given, the node subnets otherwise', () => {
    // GIVEN
    const own = ['subnet-0f0f0f0f0f0f0f001', 'subnet-0f0f0f0f0f0f0f002'];
    // WHEN
    const given = synthCluster(variant('prod-eu1', (raw) => (raw.spec.loadBalancer.subnetIds = own)));
    const defaulted = synthCluster(example('prod-eu1'));
    // THEN
    given.template.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', { Subnets: own });
    given.template.hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', {
      VPCZoneIdentifier: example('prod-eu1').spec.network.subnetIds,
    });
    defaulted.template.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      Subnets: example('prod-eu1').spec.network.subnetIds,
    });
  });

  test('IPv6 entries in allowedCidrs make it dual-stack with IPv6 client rules', () => {
    // GIVEN / WHEN
    const s = synthCluster(
      variant('prod-eu1', (raw) => (raw.spec.loadBalancer.allowedCidrs = ['10.0.0.0/8', '2001:db8:42::/48'])),
    );
    // THEN
    s.template.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', { IpAddressType: 'dualstack' });
    for (const port of [80, 443]) {
      s.template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
        IpProtocol: 'tcp',
        FromPort: port,
        ToPort: port,
        CidrIpv6: '2001:db8:42::/48',
      });
      s.template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
        IpProtocol: 'tcp',
        FromPort: port,
        ToPort: port,
        CidrIp: '10.0.0.0/8',
      });
    }
  });
});
