import { CloudFormationClient, StackStatus } from '@aws-sdk/client-cloudformation';
import { SdkCloudFormation } from '../../lib/platform/aws/sdk-cloudformation';

// What the tests with aws-sdk-client-mock share: a stack as DescribeStacks returns it, the error it throws for a
// missing stack, and the real adapter with short waits (the mock answers at once).

export const sdkStack = (name: string, status: StackStatus = 'CREATE_COMPLETE') => ({
  StackName: name,
  StackId: `arn:aws:cloudformation:eu-west-1:123456789012:stack/${name}/x`,
  StackStatus: status,
  CreationTime: new Date(0),
});

/** DescribeStacks of a stack that does not exist: a ValidationError, as CloudFormation says it. */
export const stackNotFound = (name: string) =>
  Object.assign(new Error(`Stack with id ${name} does not exist`), { name: 'ValidationError' });

export const fastSdkCloudFormation = (region = 'eu-west-1', eventPollMs = 50) =>
  new SdkCloudFormation({
    client: new CloudFormationClient({ region }),
    waiterDelaySeconds: { min: 1, max: 1 },
    eventPollMs,
  });
