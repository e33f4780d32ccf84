import { Match } from 'aws-cdk-lib/assertions';
import { example, variant } from '../../helpers/clusters';
import { synthCluster, templateDelta } from '../../helpers/synth';
import { Json } from '../../helpers/json';

/** Lists are generated in loops; logical ids come from the items, never from their positions. */

test.each(['prod-eu1', 'edge-ap1'])('%s: reordering listeners and rules leaves the template byte-identical', (name) => {
  // GIVEN
  const before = synthCluster(example(name));
  // WHEN
  const after = synthCluster(
    variant(name, (raw) => {
      raw.spec.listeners.reverse();
      raw.spec.securityGroupRules.reverse();
      raw.spec.securityGroupRules.push(raw.spec.securityGroupRules.shift());
    }),
  );
  // THEN
  expect(after.text).toBe(before.text);
});

test('adding one listener adds exactly one listener and one target group, and attaches it to the group', () => {
  // GIVEN
  const before = synthCluster(example('prod-eu1'));
  // WHEN
  const after = synthCluster(
    variant('prod-eu1', (raw) => {
      raw.spec.listeners.splice(1, 0, { name: 'metrics', port: 9100, nodePort: 30910 });
    }),
  );
  // THEN
  const delta = templateDelta(before.json, after.json);
  const typesOf = (ids: string[]) => ids.map((id) => after.json.Resources[id].Type).sort();
  expect(typesOf(delta.resources.added)).toEqual([
    'AWS::EC2::SecurityGroupIngress', // clients -> listener port on the load balancer
    'AWS::EC2::SecurityGroupIngress', // load balancer -> node port on the workers
    'AWS::ElasticLoadBalancingV2::Listener',
    'AWS::ElasticLoadBalancingV2::TargetGroup',
  ]);
  expect(delta.resources.removed).toEqual([]);
  expect(typesOf(delta.resources.modified)).toEqual(['AWS::AutoScaling::AutoScalingGroup']);
  const group = Object.values<Json>(after.json.Resources).find(
    (r: Json) => r.Type === 'AWS::AutoScaling::AutoScalingGroup',
  );
  const tg = delta.resources.added.find(
    (id) => after.json.Resources[id].Type === 'AWS::ElasticLoadBalancingV2::TargetGroup',
  );
  expect(group.Properties.TargetGroupARNs).toContainEqual({ Ref: tg });
  expect(after.json.Resources[tg!].Properties).toMatchObject({ Port: 30910, Protocol: 'TCP' });
});

test('adding one rule adds exactly one ingress resource and touches nothing else', () => {
  // GIVEN
  const before = synthCluster(example('staging-us1'));
  // WHEN
  const after = synthCluster(
    variant('staging-us1', (raw) => {
      raw.spec.securityGroupRules.splice(1, 0, {
        description: 'Prometheus',
        protocol: 'tcp',
        port: 9100,
        source: { cidr: '10.9.0.0/16' },
      });
    }),
  );
  // THEN
  const delta = templateDelta(before.json, after.json);
  expect(delta.resources.added).toHaveLength(1);
  expect(after.json.Resources[delta.resources.added[0]]).toMatchObject({
    Type: 'AWS::EC2::SecurityGroupIngress',
    Properties: { CidrIp: '10.9.0.0/16', FromPort: 9100, ToPort: 9100, IpProtocol: 'tcp', Description: 'Prometheus' },
  });
  expect(delta.resources.modified).toEqual([]);
  expect(delta.resources.removed).toEqual([]);
});

test('removing one rule removes exactly that rule', () => {
  // GIVEN
  const before = synthCluster(example('prod-eu1'));
  // WHEN
  const after = synthCluster(variant('prod-eu1', (raw) => raw.spec.securityGroupRules.splice(0, 1)));
  // THEN
  const delta = templateDelta(before.json, after.json);
  expect(delta.resources.added).toEqual([]);
  expect(delta.resources.modified).toEqual([]);
  expect(delta.resources.removed).toHaveLength(1);
  expect(before.json.Resources[delta.resources.removed[0]].Properties.FromPort).toBe(10250);
});

test('every rule of the list becomes its own resource with the right source', () => {
  // GIVEN
  const s = synthCluster(example('edge-ap1'));
  // THEN
  const ingress = Object.values<Json>(s.json.Resources).filter(
    (r: Json) => r.Type === 'AWS::EC2::SecurityGroupIngress',
  );
  // The partners' documentation ranges: TEST-NET-3 and TEST-NET-2 (not public, so node services may be open to them).
  expect(ingress.filter((r) => /^(203\.0\.113|198\.51\.100)\./.test(r.Properties.CidrIp ?? ''))).toHaveLength(30);
  expect(ingress.filter((r) => r.Properties.CidrIpv6 === '2001:db8:1234::/48')).toHaveLength(1);
  s.template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
    IpProtocol: '-1',
    Description: 'node to node',
    SourceSecurityGroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^PoolSecurityGroup'), 'GroupId'] },
  });
  s.template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
    FromPort: 31000,
    ToPort: 31100,
    SourceSecurityGroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ListenersSecurityGroup'), 'GroupId'] },
  });
  s.template.resourceCountIs('AWS::ElasticLoadBalancingV2::Listener', 19);
  s.template.resourceCountIs('AWS::ElasticLoadBalancingV2::TargetGroup', 19);
  s.template.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', {
    Port: 443,
    Protocol: 'TLS',
    Certificates: [{ CertificateArn: Match.stringLikeRegexp(':certificate/') }],
  });
  s.template.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', { Port: 30443, Protocol: 'TCP' });
  s.template.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
    Port: 31003,
    Protocol: 'UDP',
    HealthCheckProtocol: 'TCP',
  });
});
