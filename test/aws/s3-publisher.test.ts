import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HeadObjectCommand, NotFound, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { FileAsset, S3Publisher } from '../../lib/aws/s3-publisher';
import { tempDir } from '../helpers/clusters';

// The S3 publisher's requests, as the SDK would send them (no network).

const s3Mock = mockClient(S3Client);
const publisher = () => new S3Publisher(new S3Client({ region: 'eu-west-1' }), 'eu-west-1');
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

  // THEN it was looked for, then put with the checksum S3 verifies
  expect(r).toEqual({ uploaded: ['clusters/a/3f1c.yaml'], skipped: [] });
  expect(s3Mock.commandCalls(HeadObjectCommand)[0].args[0].input).toEqual({ Bucket: BUCKET, Key: 'clusters/a/3f1c.yaml' });
  const puts = s3Mock.commandCalls(PutObjectCommand);
  expect(puts).toHaveLength(1);
  const input = puts[0].args[0].input;
  expect(input).toMatchObject({ Bucket: BUCKET, Key: 'clusters/a/3f1c.yaml', ChecksumAlgorithm: 'SHA256', ContentType: 'text/yaml' });
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

test('a HeadObject that fails for another reason (403) stops the publish: nothing is overwritten blindly', async () => {
  // GIVEN credentials that may not read the bucket
  s3Mock.on(HeadObjectCommand).rejects(new S3ServiceException({ name: 'Forbidden', $fault: 'client', message: 'Forbidden', $metadata: { httpStatusCode: 403 } }));
  s3Mock.on(PutObjectCommand).resolves({});

  // WHEN an object is published
  // THEN the error surfaces and no PutObject was sent
  await expect(publisher().publish([asset('3f1c.yaml', 'x')])).rejects.toThrow(/Forbidden/);
  expect(s3Mock.commandCalls(PutObjectCommand)).toHaveLength(0);
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
  expect(p.templateUrl({ sourcePath: '/x', bucketName: 'b', objectKey: 'k.json' })).toBe(url);
});
