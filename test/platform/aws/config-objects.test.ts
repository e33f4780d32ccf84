import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { awsClients } from '../../../lib/platform/aws/clients';
import { planCleanup, S3ConfigObjects } from '../../../lib/platform/aws/config-objects';
import { configBucketName } from '../../../lib/core/naming';
import { Moto, MOTO_ACCOUNT, MOTO_REGION, startMoto } from '../../helpers/moto';

/** Config-object cleanup against moto's S3: live, desired and the newest N others stay; the rest go. */

jest.setTimeout(120_000);

const BUCKET = configBucketName(MOTO_ACCOUNT, MOTO_REGION);
const sum = (c: string) => c.repeat(64);
const key = (cluster: string, c: string, ext = 'yaml') => `clusters/${cluster}/${sum(c)}.${ext}`;
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
  await moto?.stop();
});

async function keys(prefix: string): Promise<string[]> {
  const r = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (r.Contents ?? []).map((o) => o.Key!).sort();
}

test('a settled cluster keeps its live, desired and 2 newest other config objects; the others, and nothing else, are deleted', async () => {
  // GIVEN six config objects of cluster a, stored a second apart (1 oldest … 6 newest), a note under its prefix,
  // and cluster b's object
  for (const c of ['1', '2', '3', '4', '5', '6']) {
    await s3.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: key('a', c, c === '4' ? 'ign' : 'yaml'), Body: `config ${c}` }),
    );
    await new Promise((r) => setTimeout(r, 1100)); // S3's LastModified has a resolution of a second
  }
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'clusters/a/notes.txt', Body: 'not a config object' }));
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key('b', '1'), Body: 'b' }));
  // (listed two keys a page, so that the paginator must follow the continuation tokens)
  const store = new S3ConfigObjects(s3, 2);

  // WHEN the cleanup plan for live = 2, desired = 6, keep 2 is carried out with the paginated listing
  const objects = await store.list(BUCKET, 'clusters/a/');
  const plan = planCleanup(objects, { live: sum('2'), desired: sum('6'), keepLast: 2 });
  const r = await store.delete(BUCKET, plan.remove);

  // THEN 1 and 3 are gone; 2 (live), 6 (desired), 5 and 4 (the newest others), the note and cluster b's object stay
  expect(objects).toHaveLength(7);
  expect(r).toEqual({ deleted: [key('a', '1'), key('a', '3')], errors: [] });
  expect(await keys('clusters/a/')).toEqual(
    ['clusters/a/notes.txt', key('a', '2'), key('a', '4', 'ign'), key('a', '5'), key('a', '6')].sort(),
  );
  expect(await keys('clusters/b/')).toEqual([key('b', '1')]);
});
