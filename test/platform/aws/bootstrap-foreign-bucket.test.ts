import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { HeadBucketCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { checkConfigBucket } from '../../../lib/platform/aws/s3-publisher';
import { runCli } from '../../../lib/adapters/cli/program';
import { ConfigBucketError } from '../../../lib/core/errors';
import { tempDir } from '../../helpers/clusters';

// `worker-stacks bootstrap` and a config bucket name that another account holds: refused before any change set.

const s3Mock = mockClient(S3Client);
const stsMock = mockClient(STSClient);
const cfnMock = mockClient(CloudFormationClient);
const ACCOUNT = '123456789012';
const BUCKET = `worker-stacks-config-${ACCOUNT}-eu-west-1`;
const forbidden = () =>
  new S3ServiceException({
    name: 'Forbidden',
    $fault: 'client',
    message: 'Forbidden',
    $metadata: { httpStatusCode: 403 },
  });

beforeEach(() => {
  s3Mock.reset();
  stsMock.reset();
  cfnMock.reset();
});
afterAll(() => {
  s3Mock.restore();
  stsMock.restore();
  cfnMock.restore();
});

test('checkConfigBucket asks HeadBucket with ExpectedBucketOwner: missing, own, or another account (ConfigBucketError)', async () => {
  // GIVEN S3 answering 404, then 200, then 403
  s3Mock
    .on(HeadBucketCommand)
    .rejectsOnce(
      Object.assign(
        new S3ServiceException({
          name: 'NotFound',
          $fault: 'client',
          message: 'Not Found',
          $metadata: { httpStatusCode: 404 },
        }),
      ),
    )
    .resolvesOnce({})
    .rejectsOnce(forbidden());
  const s3 = new S3Client({ region: 'eu-west-1' });

  // WHEN the bucket is checked three times
  const results = [
    await checkConfigBucket(s3, BUCKET),
    await checkConfigBucket(s3, BUCKET),
    await checkConfigBucket(s3, BUCKET).catch((e: unknown) => e),
  ];

  // THEN each request named the owner, and the answers mean missing, own, someone else's
  expect(s3Mock.commandCalls(HeadBucketCommand).map((c) => c.args[0].input)).toEqual(
    Array(3).fill({ Bucket: BUCKET, ExpectedBucketOwner: ACCOUNT }),
  );
  expect(results.slice(0, 2)).toEqual(['missing', 'own']);
  expect(results[2]).toBeInstanceOf(ConfigBucketError);
  expect((results[2] as Error).message).toMatch(
    new RegExp(`^s3://${BUCKET}: S3 refused HeadBucket \\(HTTP 403\\) with ExpectedBucketOwner=${ACCOUNT}`),
  );
});

test('worker-stacks bootstrap refuses a bucket name another account holds: the bucket, the command, exit 3, no change set', async () => {
  // GIVEN credentials of the account, and a config bucket name S3 says is not that account's
  stsMock.on(GetCallerIdentityCommand).resolves({ Account: ACCOUNT });
  s3Mock.on(HeadBucketCommand).rejects(forbidden());
  const err: string[] = [];
  const out: string[] = [];
  const dir = tempDir('bootstrap-foreign');

  // WHEN bootstrap runs for the region
  const code = await runCli(['bootstrap', '--region', 'eu-west-1', '--clusters', dir], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });

  // THEN it stops with the bucket and the bootstrap command, and CloudFormation was never called
  expect(code).toBe(3);
  expect(err.join('')).toMatch(
    new RegExp(
      `^error: s3://${BUCKET}: S3 refused HeadBucket \\(HTTP 403\\) with ExpectedBucketOwner=${ACCOUNT}: the bucket belongs to another account`,
    ),
  );
  expect(err.join('')).toContain('fix: run worker-stacks bootstrap --region eu-west-1');
  expect(out).toEqual([]);
  expect(cfnMock.calls()).toHaveLength(0);
});
