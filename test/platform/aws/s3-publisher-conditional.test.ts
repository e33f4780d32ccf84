import * as fs from 'node:fs';
import * as path from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { awsClients } from '../../../lib/platform/aws/clients';
import { S3Publisher } from '../../../lib/platform/aws/s3-publisher';
import { configBucketName } from '../../../lib/core/naming';
import { tempDir } from '../../helpers/clusters';
import { Moto, MOTO_ACCOUNT, MOTO_REGION, startMoto } from '../../helpers/moto';

/**
 * Config objects are never overwritten, against moto (5.2.5 honours If-None-Match on PutObject): when another
 * writer stores a key between the publisher's HEAD and its PUT, S3 refuses the PUT (412) and the stored bytes stay.
 */

jest.setTimeout(120_000);

const BUCKET = configBucketName(MOTO_ACCOUNT, MOTO_REGION);
const KEY = 'clusters/race/0f0e.yaml';
let moto: Moto;
let s3: S3Client;
const saved = { ...process.env };

beforeAll(async () => {
  moto = await startMoto();
  Object.assign(process.env, moto.env);
  s3 = awsClients({ region: MOTO_REGION, s3ForcePathStyle: true, maxAttempts: 1 }).s3;
  await s3.send(
    new CreateBucketCommand({ Bucket: BUCKET, CreateBucketConfiguration: { LocationConstraint: MOTO_REGION } }),
  );
});

afterAll(async () => {
  process.env = saved;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  s3?.destroy();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  await moto?.stop();
});

/** A client whose HEAD of the key misses (as it does when another writer stores the key just after it). */
function racingClient(): S3Client {
  const client = awsClients({ region: MOTO_REGION, s3ForcePathStyle: true, maxAttempts: 1 }).s3;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'HeadObjectCommand')
        throw Object.assign(new Error('NotFound'), { name: 'NotFound', $metadata: { httpStatusCode: 404 } });
      return next(args);
    },
    { step: 'initialize', name: 'headMisses' },
  );
  return client;
}

test('a key stored by another writer after the HEAD is not overwritten: the PUT is refused and counted as skipped', async () => {
  // GIVEN a key that another writer stored (with other bytes than ours: a tampered or racing upload)
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: 'first writer\n' }));
  const file = path.join(tempDir('race'), 'config.yaml');
  fs.writeFileSync(file, 'second writer\n');
  const client = racingClient();

  // WHEN the publisher, whose HEAD missed, publishes its bytes under the same key
  const r = await new S3Publisher(client, MOTO_REGION).publish([
    { sourcePath: file, bucketName: BUCKET, objectKey: KEY },
  ]);
  client.destroy();

  // THEN S3 kept the first bytes, and the publisher says it skipped the key
  expect(r).toEqual({ uploaded: [], skipped: [KEY] });
  const stored = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: KEY }));
  expect(await stored.Body!.transformToString()).toBe('first writer\n');
});

test('a new key is stored', async () => {
  const file = path.join(tempDir('new'), 'config.yaml');
  fs.writeFileSync(file, 'fresh\n');
  const r = await new S3Publisher(s3, MOTO_REGION).publish([
    { sourcePath: file, bucketName: BUCKET, objectKey: 'clusters/race/1a2b.yaml' },
  ]);
  expect(r).toEqual({ uploaded: ['clusters/race/1a2b.yaml'], skipped: [] });
});
