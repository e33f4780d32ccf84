import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HeadObjectCommand, NotFound, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { configBucketOwner, FileAsset, S3Publisher } from '../../../lib/platform/aws/s3-publisher';
import { ConfigBucketError } from '../../../lib/core/errors';
import { configBucketName } from '../../../lib/core/naming';
import { tempDir } from '../../helpers/clusters';

// The S3 publisher's requests, as the SDK would send them (no network).

const s3Mock = mockClient(S3Client);
const publisher = () => new S3Publisher(new S3Client({ region: 'eu-west-1' }), 'eu-west-1');
const ACCOUNT = '123456789012';
const BUCKET = 'worker-stacks-config-123456789012-eu-west-1';
const missing = () => new NotFound({ message: 'Not Found', $metadata: { httpStatusCode: 404 } });

function asset(name: string, content: string): FileAsset {
  const file = path.join(tempDir('asset'), name);
  fs.writeFileSync(file, content);
  return { sourcePath: file, bucketName: BUCKET, objectKey: `clusters/a/${name}` };
}

beforeEach(() => s3Mock.reset());
afterAll(() => s3Mock.restore());

test('a new object is uploaded with S3 SHA-256 integrity: ChecksumAlgorithm SHA256 and the base64 digest of its bytes', async () => {
  // GIVEN a config object S3 does not have
  const content = '#cloud-config\nwrite_files: []\n';
  const a = asset('3f1c.yaml', content);
  s3Mock.on(HeadObjectCommand).rejects(missing());
  s3Mock.on(PutObjectCommand).resolves({});

  // WHEN it is published
  const r = await publisher().publish([a]);

  // THEN it was looked for, then put with the checksum S3 verifies, both naming the account that must own the bucket
  expect(r).toEqual({ uploaded: ['clusters/a/3f1c.yaml'], skipped: [] });
  expect(s3Mock.commandCalls(HeadObjectCommand)[0].args[0].input).toEqual({
    Bucket: BUCKET,
    Key: 'clusters/a/3f1c.yaml',
    ExpectedBucketOwner: ACCOUNT,
  });
  const puts = s3Mock.commandCalls(PutObjectCommand);
  expect(puts).toHaveLength(1);
  const input = puts[0].args[0].input;
  expect(input).toMatchObject({
    Bucket: BUCKET,
    Key: 'clusters/a/3f1c.yaml',
    ExpectedBucketOwner: ACCOUNT,
    ChecksumAlgorithm: 'SHA256',
    ContentType: 'text/yaml',
    IfNoneMatch: '*',
  });
  expect(input.ChecksumSHA256).toBe(createHash('sha256').update(content).digest('base64'));
  expect(Buffer.from(input.Body as Uint8Array).toString('utf8')).toBe(content);
});

test('an Ignition config and a template are uploaded as JSON', async () => {
  // GIVEN two JSON objects S3 does not have
  const assets = [asset('9a.ign', '{"ignition":{"version":"3.4.0"}}'), asset('tpl.json', '{"Resources":{}}')];
  s3Mock.on(HeadObjectCommand).rejects(missing());
  s3Mock.on(PutObjectCommand).resolves({});

  // WHEN they are published
  await publisher().publish(assets);

  // THEN both go with a JSON content type and their own checksum
  const inputs = s3Mock.commandCalls(PutObjectCommand).map((c) => c.args[0].input);
  expect(inputs.map((i) => [i.Key, i.ContentType])).toEqual([
    ['clusters/a/9a.ign', 'application/json'],
    ['clusters/a/tpl.json', 'application/json'],
  ]);
  expect(inputs[1].ChecksumSHA256).toBe(createHash('sha256').update('{"Resources":{}}').digest('base64'));
});

test('an object that exists (HeadObject 200) is skipped: no PutObject', async () => {
  // GIVEN a config object already in S3 (its key is its content)
  s3Mock.on(HeadObjectCommand).resolves({ ContentLength: 31, $metadata: { httpStatusCode: 200 } });
  s3Mock.on(PutObjectCommand).resolves({});

  // WHEN it is published again
  const r = await publisher().publish([asset('3f1c.yaml', '#cloud-config\nwrite_files: []\n')]);

  // THEN nothing is written
  expect(r).toEqual({ uploaded: [], skipped: ['clusters/a/3f1c.yaml'] });
  expect(s3Mock.commandCalls(PutObjectCommand)).toHaveLength(0);
});

const forbidden = (name: string) =>
  new S3ServiceException({ name, $fault: 'client', message: name, $metadata: { httpStatusCode: 403 } });

test('a HeadObject refused with 403 (a bucket of another account) stops the publish: named bucket, bootstrap command, no PutObject', async () => {
  // GIVEN a bucket under the predictable name that S3 says is not the expected owner's
  s3Mock.on(HeadObjectCommand).rejects(forbidden('Forbidden'));
  s3Mock.on(PutObjectCommand).resolves({});

  // WHEN an object is published
  const error = await publisher()
    .publish([asset('3f1c.yaml', 'x')])
    .catch((e: unknown) => e);

  // THEN a ConfigBucketError names the bucket, the owner it expected and the bootstrap command; nothing was put
  expect(error).toBeInstanceOf(ConfigBucketError);
  expect((error as ConfigBucketError).bucket).toBe(BUCKET);
  expect((error as Error).message).toMatch(
    new RegExp(
      `^s3://${BUCKET}: S3 refused HeadObject \\(HTTP 403\\) with ExpectedBucketOwner=${ACCOUNT}: the bucket belongs to another account`,
    ),
  );
  expect((error as Error).message).toContain(
    `fix: run worker-stacks bootstrap --region eu-west-1 (or npx cdk deploy WorkerStacks-Bootstrap-${ACCOUNT}-eu-west-1) with credentials of account ${ACCOUNT}`,
  );
  expect((error as Error).cause).toBeInstanceOf(S3ServiceException);
  expect(s3Mock.commandCalls(PutObjectCommand)).toHaveLength(0);
});

test('a PutObject refused with AccessDenied (ExpectedBucketOwner mismatch) is the same ConfigBucketError', async () => {
  // GIVEN HEAD says 404 and PUT is refused for the owner
  s3Mock.on(HeadObjectCommand).rejects(missing());
  s3Mock.on(PutObjectCommand).rejects(forbidden('AccessDenied'));

  // WHEN an object is published
  // THEN the refusal names the bucket and the bootstrap command
  await expect(publisher().publish([asset('3f1c.yaml', 'x')])).rejects.toThrow(
    new RegExp(
      `s3://${BUCKET}: S3 refused PutObject \\(HTTP 403\\) with ExpectedBucketOwner=${ACCOUNT}[\\s\\S]*fix: run worker-stacks bootstrap`,
    ),
  );
});

test('a bucket that does not exist (NoSuchBucket) says the account is not bootstrapped, with the command', async () => {
  // GIVEN no bucket: HEAD is a plain 404, PUT says NoSuchBucket
  s3Mock.on(HeadObjectCommand).rejects(missing());
  s3Mock.on(PutObjectCommand).rejects(
    new S3ServiceException({
      name: 'NoSuchBucket',
      $fault: 'client',
      message: 'The specified bucket does not exist',
      $metadata: { httpStatusCode: 404 },
    }),
  );

  // WHEN an object is published
  // THEN
  await expect(publisher().publish([asset('3f1c.yaml', 'x')])).rejects.toThrow(
    `s3://${BUCKET} does not exist: account ${ACCOUNT} is not bootstrapped in this region; nothing was uploaded\n  fix: run worker-stacks bootstrap --region eu-west-1`,
  );
});

test('a throttling error passes through as it is (transient, retried by the reconciler)', async () => {
  // GIVEN S3 slows us down
  const slowDown = new S3ServiceException({
    name: 'SlowDown',
    $fault: 'server',
    message: 'Please reduce your request rate.',
    $metadata: { httpStatusCode: 503 },
  });
  s3Mock.on(HeadObjectCommand).rejects(slowDown);

  // WHEN an object is published
  // THEN the SDK's own error surfaces
  await expect(publisher().publish([asset('3f1c.yaml', 'x')])).rejects.toBe(slowDown);
});

test('an asset whose bucket name carries no account is refused before any request, and so is its template URL', async () => {
  // GIVEN a good asset and one for the CDK bootstrap bucket (no owner to expect)
  const good = asset('3f1c.yaml', 'x');
  const foreign = { ...asset('tpl.json', '{}'), bucketName: 'cdk-hnb659fds-assets-123456789012-eu-west-1' };

  // WHEN they are published, or the template URL asked for
  const error = await publisher()
    .publish([good, foreign])
    .catch((e: unknown) => e);

  // THEN nothing at all was sent, and the error names the bucket and the rule
  expect(error).toBeInstanceOf(ConfigBucketError);
  expect((error as Error).message).toMatch(
    /^s3:\/\/cdk-hnb659fds-assets-123456789012-eu-west-1\/clusters\/a\/tpl.json: not a config bucket \(worker-stacks-config-<account>-<region>\)/,
  );
  expect(s3Mock.calls()).toHaveLength(0);
  expect(() => publisher().templateUrl(foreign)).toThrow(ConfigBucketError);
});

test.each([
  ['123456789012', 'eu-west-1'],
  ['000000000001', 'us-gov-west-1'],
  ['210987654321', 'ap-southeast-1'],
])('configBucketOwner reads the account back from configBucketName(%s, %s)', (account, region) => {
  // WHEN the owner of the bucket name is asked for
  // THEN it is the account that named it; names that are not config buckets have none
  expect(configBucketOwner(configBucketName(account, region))).toBe(account);
  expect(configBucketOwner(`x${configBucketName(account, region)}`)).toBeUndefined();
  expect(configBucketOwner(`worker-stacks-config-${account.slice(1)}-${region}`)).toBeUndefined();
});

test('templateUrl is the regional S3 URL CloudFormation reads a template from', () => {
  // GIVEN a template asset
  const a = { sourcePath: '/x', bucketName: BUCKET, objectKey: 'clusters/a/tpl.json' };

  // WHEN its URL is asked for
  // THEN it names the region, the bucket and the key
  expect(publisher().templateUrl(a)).toBe(`https://s3.eu-west-1.amazonaws.com/${BUCKET}/clusters/a/tpl.json`);
});

test.each([
  ['us-gov-west-1', 'https://s3.us-gov-west-1.amazonaws.com/b/k.json'],
  ['cn-north-1', 'https://s3.cn-north-1.amazonaws.com.cn/b/k.json'],
  ['us-iso-east-1', 'https://s3.us-iso-east-1.c2s.ic.gov/b/k.json'],
])('templateUrl in %s uses that partition S3 domain', (region, url) => {
  // GIVEN a publisher for a region outside the aws partition's domain
  const p = new S3Publisher(new S3Client({ region }), region);

  // WHEN a template URL is asked for
  // THEN it is on that partition's S3 endpoint
  expect(p.templateUrl({ sourcePath: '/x', bucketName: configBucketName(ACCOUNT, region), objectKey: 'k.json' })).toBe(
    url.replace('/b/', `/${configBucketName(ACCOUNT, region)}/`),
  );
});
