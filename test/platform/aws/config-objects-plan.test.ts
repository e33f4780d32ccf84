import { DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { planCleanup, S3ConfigObjects } from '../../../lib/platform/aws/config-objects';

const s3Mock = mockClient(S3Client);
beforeEach(() => s3Mock.reset());
afterAll(() => s3Mock.restore());

const BUCKET = 'worker-stacks-config-123456789012-eu-west-1';
const k = (c: string) => `clusters/a/${c.repeat(64)}.yaml`;
const at = (minute: number) => new Date(Date.UTC(2030, 0, 1, 0, minute));

describe('planCleanup', () => {
  // Objects 1 … 6, one minute apart (6 newest).
  const objects = ['1', '2', '3', '4', '5', '6'].map((c, i) => ({ key: k(c), lastModified: at(i) }));
  test.each([
    // [live, desired, keepLast, removed]
    ['6', '6', 3, ['1', '2']],
    ['1', '6', 3, ['2']], // an old live config is kept whatever its age
    ['5', '6', 0, ['1', '2', '3', '4']],
    [undefined, undefined, 3, ['1', '2', '3']],
    ['6', '6', 10, []],
  ] as const)('live %s, desired %s, keep %s: removes %j', (live, desired, keepLast, removed) => {
    const plan = planCleanup(objects, {
      live: live && live.repeat(64),
      desired: desired && desired.repeat(64),
      keepLast,
    });
    expect(plan.remove).toEqual(removed.map(k));
    expect([...plan.keep, ...plan.remove].sort()).toEqual(objects.map((o) => o.key).sort());
  });

  test('keys that are not config objects are never planned for removal; equal times are ordered by key', () => {
    const plan = planCleanup([{ key: 'clusters/a/template.json' }, { key: k('b') }, { key: k('a') }, { key: k('c') }], {
      keepLast: 1,
    });
    expect(plan.remove).toEqual([k('b'), k('c')]);
  });
});

test('every request names the bucket owner: ListObjectsV2 and DeleteObjects with ExpectedBucketOwner', async () => {
  // GIVEN S3 answering a listing and a delete
  s3Mock.on(ListObjectsV2Command).resolves({ Contents: [{ Key: k('1'), LastModified: at(1) }] });
  s3Mock.on(DeleteObjectsCommand).resolves({ Deleted: [{ Key: k('1') }] });
  const store = new S3ConfigObjects(new S3Client({ region: 'eu-west-1' }));
  // WHEN
  await store.list(BUCKET, 'clusters/a/');
  await store.delete(BUCKET, [k('1')]);
  // THEN
  expect(s3Mock.commandCalls(ListObjectsV2Command)[0].args[0].input).toMatchObject({
    Bucket: BUCKET,
    Prefix: 'clusters/a/',
    ExpectedBucketOwner: '123456789012',
  });
  expect(s3Mock.commandCalls(DeleteObjectsCommand)[0].args[0].input).toMatchObject({
    Bucket: BUCKET,
    ExpectedBucketOwner: '123456789012',
    Delete: { Objects: [{ Key: k('1') }] },
  });
});

test('more than 1,000 keys are deleted in batches of 1,000 (the DeleteObjects limit)', async () => {
  // GIVEN
  s3Mock.on(DeleteObjectsCommand).callsFake((input) => ({ Deleted: input.Delete.Objects }));
  const keys = Array.from({ length: 1005 }, (_, i) => `clusters/a/${i.toString(16).padStart(64, '0')}.yaml`);
  // WHEN
  const r = await new S3ConfigObjects(new S3Client({ region: 'eu-west-1' })).delete(BUCKET, keys);
  // THEN
  expect(s3Mock.commandCalls(DeleteObjectsCommand).map((c) => c.args[0].input.Delete!.Objects!.length)).toEqual([
    1000, 5,
  ]);
  expect(r.deleted).toHaveLength(1005);
});

test('a bucket name without an account is refused before any request', async () => {
  const store = new S3ConfigObjects(new S3Client({ region: 'eu-west-1' }));
  await expect(store.list('some-bucket', 'clusters/a/')).rejects.toThrow('not a config bucket');
  expect(s3Mock.calls()).toHaveLength(0);
});
