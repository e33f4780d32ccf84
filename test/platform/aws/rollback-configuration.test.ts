import { CloudFormationClient, CreateChangeSetCommand } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { ChangeSetRequest } from '../../../lib/model/ports/cloudformation-port';
import { SdkCloudFormation } from '../../../lib/platform/aws/sdk-cloudformation';
import { EXAMPLE, Harness } from '../../fakes/harness';

/**
 * spec.rollout's alarms reach CloudFormation on every change set as its RollbackConfiguration: through the SDK
 * adapter (request shape, aws-sdk-client-mock) and from the cluster object through the reconciler (the fake records
 * each request).
 */

const cfnMock = mockClient(CloudFormationClient);
afterAll(() => cfnMock.restore());

const ALARMS = [
  'arn:aws:cloudwatch:us-east-1:222222222222:alarm:staging-us1-nodes-not-ready',
  'arn:aws:cloudwatch:us-east-1:222222222222:alarm:staging-us1-slo',
];
const request = (rollbackConfiguration?: ChangeSetRequest['rollbackConfiguration']): ChangeSetRequest => ({
  stackName: 'WorkerStack-staging-us1',
  changeSetName: 'ws-1',
  type: 'UPDATE',
  templateBody: '{}',
  capabilities: ['CAPABILITY_IAM'],
  tags: {},
  description: 'd',
  clientToken: 't',
  rollbackConfiguration,
});

describe('the SDK adapter', () => {
  beforeEach(() => {
    cfnMock.reset();
    cfnMock
      .on(CreateChangeSetCommand)
      .resolves({ Id: 'arn:aws:cloudformation:us-east-1:222222222222:changeSet/ws-1/1' });
  });

  test('sends each alarm as a rollback trigger with the monitoring time', async () => {
    // WHEN
    await new SdkCloudFormation({ client: new CloudFormationClient({ region: 'us-east-1' }) }).createChangeSet(
      request({ alarmArns: ALARMS, monitoringTimeMinutes: 15 }),
    );
    // THEN
    expect(cfnMock.commandCalls(CreateChangeSetCommand)[0].args[0].input.RollbackConfiguration).toEqual({
      RollbackTriggers: ALARMS.map((Arn) => ({ Arn, Type: 'AWS::CloudWatch::Alarm' })),
      MonitoringTimeInMinutes: 15,
    });
  });

  test('without alarms it sends an empty list, so alarms removed from the object stop rolling the stack back', async () => {
    // WHEN
    await new SdkCloudFormation({ client: new CloudFormationClient({ region: 'us-east-1' }) }).createChangeSet(
      request(),
    );
    // THEN CloudFormation would keep the stack's previous triggers if the parameter were left out
    expect(cfnMock.commandCalls(CreateChangeSetCommand)[0].args[0].input.RollbackConfiguration).toEqual({
      RollbackTriggers: [],
      MonitoringTimeInMinutes: 0,
    });
  });
});

describe('the reconciler', () => {
  let h: Harness;
  beforeEach(() => {
    h = new Harness();
  });
  afterEach(() => h.cleanup());

  test('puts spec.rollout on the create and on every update change set', async () => {
    // GIVEN
    h.edit(EXAMPLE, (raw) => (raw.spec.rollout = { rollbackAlarms: ALARMS, monitoringTimeMinutes: 30 }));
    // WHEN the stack is created, then updated
    expect((await h.reconcile()).result).toBe('applied');
    h.edit(EXAMPLE, (raw) => (raw.spec.cloudConfig.values.maxPods = 99));
    expect((await h.reconcile()).result).toBe('applied');
    // THEN
    expect(h.cfn.requests.map((r) => [r.type, r.rollbackConfiguration])).toEqual([
      ['CREATE', { alarmArns: ALARMS, monitoringTimeMinutes: 30 }],
      ['UPDATE', { alarmArns: ALARMS, monitoringTimeMinutes: 30 }],
    ]);
  });

  test('alarms removed from the object are removed from the next change set', async () => {
    // GIVEN
    h.edit(EXAMPLE, (raw) => (raw.spec.rollout = { rollbackAlarms: ALARMS }));
    expect((await h.reconcile()).result).toBe('applied');
    // WHEN the alarms alone are removed: the template is the same, so CloudFormation finds no change to execute
    // (the empty configuration takes effect with the stack's next operation, as docs/node-rolls.md says)
    h.edit(EXAMPLE, (raw) => delete raw.spec.rollout);
    expect((await h.reconcile()).result).toBe('no-changes');
    // THEN
    expect(h.cfn.requests.at(-1)?.rollbackConfiguration).toEqual({ alarmArns: [], monitoringTimeMinutes: 0 });
  });
});
