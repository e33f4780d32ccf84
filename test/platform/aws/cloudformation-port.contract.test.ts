import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { SdkCloudFormation } from '../../../lib/platform/aws/sdk-cloudformation';
import { FakeCloudFormation } from '../../fakes/fake-cloudformation';
import { FakeClock } from '../../fakes/fake-ports';
import { Moto, MOTO_REGION, startMoto } from '../../helpers/moto';
import { cloudFormationPortContract } from './cloudformation-port.contract';

// One contract, two implementations: the fake the reconciler's tests run on, and the SDK adapter on moto.

cloudFormationPortContract('the fake', async () => {
  const clock = new FakeClock();
  const fake = new FakeCloudFormation({ clock });
  return { port: fake, settle: async () => fake.advance(60_000), stop: async () => undefined };
});

let moto: Moto | undefined;
afterAll(() => moto?.stop());

// moto leaves the outputs of change-set stacks out and ends every operation at once: the project's wrapper
// (tools/moto/server.py) adds both, with each operation in progress for IN_PROGRESS_SECONDS.
const IN_PROGRESS_SECONDS = 3;

cloudFormationPortContract(
  'the SDK adapter on moto (with the project wrapper)',
  async () => {
    moto ??= await startMoto(30_000, {}, { inProgressSeconds: IN_PROGRESS_SECONDS });
    // One server for the file: each test starts from no stacks.
    const client = new CloudFormationClient({
      region: MOTO_REGION,
      endpoint: moto.endpoint,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    await moto.python('out = [cfn.delete_stack(StackName=s["StackName"]) for s in cfn.describe_stacks()["Stacks"]]');
    const settle = () => new Promise<void>((r) => setTimeout(r, IN_PROGRESS_SECONDS * 1000 + 500));
    return {
      port: new SdkCloudFormation({ client, waiterDelaySeconds: { min: 1, max: 1 }, eventPollMs: 200 }),
      settle,
      stop: async () => client.destroy(),
    };
  },
  { lastUpdatedTime: true },
);
