import { App, CfnOutput, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import * as pinModule from '../../../lib/engines/stacks/pin-logical-ids';
import { pinLogicalIds } from '../../../lib/engines/stacks/pin-logical-ids';
import { example } from '../../helpers/clusters';
import { synthCluster } from '../../helpers/synth';

/** A stack with references between elements, a renamed element and an overridden one. */
function build(pin: boolean): Record<string, unknown> {
  const app = new App();
  const stack = new Stack(app, 'S', { env: { account: '123456789012', region: 'eu-west-1' } });
  const sg = new ec2.CfnSecurityGroup(new Construct(stack, 'Nodes'), 'Group', {
    groupDescription: 'nodes',
    vpcId: 'vpc-1',
  });
  for (const port of [22, 443]) {
    new ec2.CfnSecurityGroupIngress(stack, `Rule${port}`, {
      groupId: sg.attrGroupId,
      ipProtocol: 'tcp',
      fromPort: port,
      toPort: port,
      sourceSecurityGroupId: sg.attrGroupId,
    });
  }
  stack.renameLogicalId('Rule22', 'SshRule');
  new ec2.CfnSecurityGroup(stack, 'Other', { groupDescription: 'other', vpcId: 'vpc-1' }).overrideLogicalId(
    'HandPicked',
  );
  new CfnOutput(stack, 'GroupId', { value: sg.attrGroupId });
  if (pin) pinLogicalIds(stack);
  return app.synth().getStackByName('S').template;
}

test('pinned logical ids are the ones the stack allocates: renames, overrides and references unchanged', () => {
  // GIVEN / WHEN
  const plain = build(false);
  const pinned = build(true);
  // THEN
  expect(pinned).toEqual(plain);
  expect(Object.keys((pinned as { Resources: object }).Resources)).toEqual(
    expect.arrayContaining(['SshRule', 'HandPicked']),
  );
});

test.each(['prod-eu1', 'edge-ap1', 'staging-us1'])(
  '%s: the worker stack template is byte-identical with and without pinning',
  (name) => {
    // GIVEN
    const pinned = synthCluster(example(name)).text;
    const spy = jest.spyOn(pinModule, 'pinLogicalIds').mockImplementation(() => undefined);
    try {
      // WHEN
      const unpinned = synthCluster(example(name)).text;
      // THEN
      expect(spy).toHaveBeenCalled();
      expect(pinned).toEqual(unpinned);
    } finally {
      spy.mockRestore();
    }
  },
);
