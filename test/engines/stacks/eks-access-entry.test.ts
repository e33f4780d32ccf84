/**
 * The node role's EKS access entry, asserted on the template (moto's CloudFormation skips AWS::EKS::AccessEntry with
 * a warning, so a deployed stack on moto proves nothing about it: docs/testing.md).
 */
import { eksCluster } from '../../helpers/eks';
import { example } from '../../helpers/clusters';
import { idsOfType, synthCluster } from '../../helpers/synth';

describe('the EC2_LINUX access entry of the node role', () => {
  test('an eks-al2023 cluster: one entry, EC2_LINUX, its own node role, no groups, no policies, no username', () => {
    // GIVEN
    const { json } = synthCluster(eksCluster());
    // WHEN
    const ids = idsOfType(json, 'AWS::EKS::AccessEntry');
    // THEN
    expect(ids).toHaveLength(1);
    const entry = json.Resources[ids[0]];
    expect(Object.keys(entry.Properties).sort()).toEqual(['ClusterName', 'PrincipalArn', 'Tags', 'Type']);
    expect(entry.Properties.Type).toBe('EC2_LINUX');
    expect(entry.Properties.ClusterName).toBe('eks-eu1');
    // The principal is the role of this very stack (so in the cluster's own account), never a literal ARN.
    const role = entry.Properties.PrincipalArn['Fn::GetAtt'];
    expect(role[1]).toBe('Arn');
    expect(json.Resources[role[0]].Type).toBe('AWS::IAM::Role');
  });

  test.each([
    [
      'an eks-al2023 cluster that chose aws-auth',
      () => eksCluster((raw) => (raw.spec.cloudConfig.values.nodeAccess = 'aws-auth')),
    ],
    ['a cloud-init cluster', () => example('staging-us1')],
    ['an Ignition cluster', () => example('prod-eu1')],
  ])('%s: no access entry', (_what, cluster) => {
    // WHEN
    const { json } = synthCluster(cluster());
    // THEN
    expect(idsOfType(json, 'AWS::EKS::AccessEntry')).toEqual([]);
  });
});
