import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { awsClients } from '../../../lib/platform/aws/clients';
import { S3Publisher } from '../../../lib/platform/aws/s3-publisher';
import { configBucketName } from '../../../lib/core/naming';
import { tempDir } from '../../helpers/clusters';
import { Moto, MOTO_ACCOUNT, MOTO_REGION, startMoto } from '../../helpers/moto';

/**
 * The config bucket's owner on the wire, against moto: every request our S3 client makes on a config bucket
 * (the publisher's head and put, the template upload for TemplateURL, and get, list, delete) carries
 * `x-amz-expected-bucket-owner` = the account in the bucket's name, and S3's emulator accepts the requests.
 * moto records each request it receives; the test reads that record rather than trusting the SDK.
 * (moto does not enforce the header; the refusal of another account's bucket is tested on its S3 error shapes
 * in test/platform/aws/s3-publisher.test.ts.)
 */

jest.setTimeout(120_000);

const BUCKET = configBucketName(MOTO_ACCOUNT, MOTO_REGION);
let moto: Moto;
let recording: string;
let s3: S3Client;
const saved = { ...process.env };

interface Recorded {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
}

/** The requests moto received since recording started, with lower-case header names. */
async function recorded(): Promise<Recorded[]> {
  const text = await (await fetch(`${moto.endpoint}/moto-api/recorder/download-recording`)).text();
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l))
    .map((r) => ({
      method: r.method,
      url: r.url,
      headers: Object.fromEntries(Object.entries<string>(r.headers).map(([k, v]) => [k.toLowerCase(), v])),
    }));
}

beforeAll(async () => {
  recording = path.join(tempDir('moto-recording'), 'requests.jsonl');
  moto = await startMoto(30_000, { MOTO_RECORDER_FILEPATH: recording });
  // awsClients takes its endpoint and credentials from the environment, as the CLI does.
  Object.assign(process.env, moto.env);
  s3 = awsClients({ region: MOTO_REGION, s3ForcePathStyle: true, maxAttempts: 1 }).s3;
  await s3.send(
    new CreateBucketCommand({ Bucket: BUCKET, CreateBucketConfiguration: { LocationConstraint: MOTO_REGION } }),
  );
  await s3.send(
    new CreateBucketCommand({
      Bucket: 'someone-elses-bucket',
      CreateBucketConfiguration: { LocationConstraint: MOTO_REGION },
    }),
  );
});

afterAll(async () => {
  process.env = saved;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  s3?.destroy();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  await moto?.stop();
});

test('head, put, get, list and delete on the config bucket all send ExpectedBucketOwner; another bucket gets none', async () => {
  // GIVEN a config object and a template (as the reconciler uploads for TemplateURL) to publish
  const dir = tempDir('owner');
  fs.writeFileSync(path.join(dir, 'config.yaml'), '#cloud-config\nwrite_files: []\n');
  fs.writeFileSync(path.join(dir, 'template.json'), '{"Resources":{}}');
  const assets = [
    { sourcePath: path.join(dir, 'config.yaml'), bucketName: BUCKET, objectKey: 'clusters/a/1.yaml' },
    { sourcePath: path.join(dir, 'template.json'), bucketName: BUCKET, objectKey: 'clusters/a/2.json' },
  ];
  const publisher = new S3Publisher(s3, MOTO_REGION);
  await fetch(`${moto.endpoint}/moto-api/recorder/start-recording`, { method: 'POST' });

  // WHEN they are published twice, then read, listed and deleted through the same client, and another bucket listed
  const first = await publisher.publish(assets);
  const second = await publisher.publish(assets);
  const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'clusters/a/1.yaml' }));
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'clusters/a/' }));
  await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'clusters/a/2.json' }));
  await s3.send(new ListObjectsV2Command({ Bucket: 'someone-elses-bucket' }));
  await fetch(`${moto.endpoint}/moto-api/recorder/stop-recording`, { method: 'POST' });

  // THEN moto took every request (uploaded once, skipped once, read back byte for byte)
  expect(first).toEqual({ uploaded: ['clusters/a/1.yaml', 'clusters/a/2.json'], skipped: [] });
  expect(second).toEqual({ uploaded: [], skipped: ['clusters/a/1.yaml', 'clusters/a/2.json'] });
  expect(await got.Body!.transformToString()).toBe('#cloud-config\nwrite_files: []\n');
  expect(listed.Contents!.map((o) => o.Key)).toEqual(['clusters/a/1.yaml', 'clusters/a/2.json']);
  // and each request on the config bucket carried its owner, and only those
  const requests = await recorded();
  const shape = (r: Recorded) =>
    `${r.method} ${new URL(r.url, moto.endpoint).pathname} ${r.headers['x-amz-expected-bucket-owner'] ?? '-'}`;
  expect(requests.map(shape)).toEqual([
    `HEAD /${BUCKET}/clusters/a/1.yaml ${MOTO_ACCOUNT}`,
    `PUT /${BUCKET}/clusters/a/1.yaml ${MOTO_ACCOUNT}`,
    `HEAD /${BUCKET}/clusters/a/2.json ${MOTO_ACCOUNT}`,
    `PUT /${BUCKET}/clusters/a/2.json ${MOTO_ACCOUNT}`,
    `HEAD /${BUCKET}/clusters/a/1.yaml ${MOTO_ACCOUNT}`,
    `HEAD /${BUCKET}/clusters/a/2.json ${MOTO_ACCOUNT}`,
    `GET /${BUCKET}/clusters/a/1.yaml ${MOTO_ACCOUNT}`,
    `GET /${BUCKET}/ ${MOTO_ACCOUNT}`,
    `DELETE /${BUCKET}/clusters/a/2.json ${MOTO_ACCOUNT}`,
    'GET /someone-elses-bucket/ -',
  ]);
});

test('an owner the caller set is kept, not replaced from the bucket name', async () => {
  // GIVEN recording from now on
  await fetch(`${moto.endpoint}/moto-api/recorder/reset-recording`, { method: 'POST' });
  await fetch(`${moto.endpoint}/moto-api/recorder/start-recording`, { method: 'POST' });

  // WHEN a request names its own expected owner
  await s3
    .send(new ListObjectsV2Command({ Bucket: BUCKET, ExpectedBucketOwner: '210987654321' }))
    .catch(() => undefined);
  await fetch(`${moto.endpoint}/moto-api/recorder/stop-recording`, { method: 'POST' });

  // THEN that one went on the wire
  expect((await recorded()).map((r) => r.headers['x-amz-expected-bucket-owner'])).toEqual(['210987654321']);
});
