import { DeleteObjectsCommand, paginateListObjectsV2, S3Client } from '@aws-sdk/client-s3';
import { configBucketFailure, expectedBucketOwner } from './s3-publisher';

/** One stored config object of a cluster. */
export interface ConfigObject {
  readonly key: string;
  readonly lastModified?: Date;
}

/** The config objects under a cluster's prefix, and their removal. Every request names the bucket's owner. */
export interface ConfigObjectStore {
  list(bucket: string, prefix: string): Promise<ConfigObject[]>;
  /** Deletes the keys; returns the ones S3 deleted and those it refused (with why). */
  delete(
    bucket: string,
    keys: readonly string[],
  ): Promise<{ deleted: string[]; errors: Array<{ key: string; message: string }> }>;
}

/** A config object's key: `clusters/<name>/<sha256>.<ign|yaml>`. Anything else under the prefix is never touched. */
export const CONFIG_OBJECT_KEY = /^clusters\/[a-z0-9-]+\/([0-9a-f]{64})\.(ign|yaml)$/;

export interface CleanupPlan {
  readonly keep: string[];
  readonly remove: string[];
}

/**
 * Which config objects of a settled cluster go: every one that is neither the live config, the desired one, nor
 * among the `keepLast` most recently stored others (rollback targets). Keys that are not config objects stay.
 * Deterministic: ties in time are broken by key.
 */
export function planCleanup(
  objects: readonly ConfigObject[],
  opts: { readonly live?: string; readonly desired?: string; readonly keepLast: number },
): CleanupPlan {
  const configs = objects.flatMap((object) => {
    const sum = CONFIG_OBJECT_KEY.exec(object.key)?.[1];
    return sum === undefined ? [] : [{ object, sum }];
  });
  const others = configs
    .filter((c) => c.sum !== opts.live && c.sum !== opts.desired)
    .map((c) => c.object)
    .sort((a, b) => (b.lastModified?.getTime() ?? 0) - (a.lastModified?.getTime() ?? 0) || (a.key < b.key ? -1 : 1));
  const remove = others
    .slice(Math.max(0, opts.keepLast))
    .map((o) => o.key)
    .sort();
  const gone = new Set(remove);
  return {
    keep: objects
      .map((o) => o.key)
      .filter((k) => !gone.has(k))
      .sort(),
    remove,
  };
}

/** S3: a paginated ListObjectsV2 and batched DeleteObjects (1,000 keys a request), each with ExpectedBucketOwner. */
export class S3ConfigObjects implements ConfigObjectStore {
  constructor(
    private readonly s3: S3Client,
    /** Keys per ListObjectsV2 page. @default 1000 (S3's maximum) */
    private readonly pageSize = 1000,
  ) {}

  public async list(bucket: string, prefix: string): Promise<ConfigObject[]> {
    const owner = expectedBucketOwner(bucket);
    const out: ConfigObject[] = [];
    try {
      for await (const page of paginateListObjectsV2(
        { client: this.s3, pageSize: this.pageSize },
        { Bucket: bucket, Prefix: prefix, ExpectedBucketOwner: owner },
      )) {
        for (const o of page.Contents ?? []) if (o.Key) out.push({ key: o.Key, lastModified: o.LastModified });
      }
    } catch (e) {
      throw configBucketFailure(e, bucket, 'ListObjectsV2', 's3:ListBucket');
    }
    return out;
  }

  public async delete(
    bucket: string,
    keys: readonly string[],
  ): Promise<{ deleted: string[]; errors: Array<{ key: string; message: string }> }> {
    const owner = expectedBucketOwner(bucket);
    const deleted: string[] = [];
    const errors: Array<{ key: string; message: string }> = [];
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      try {
        const r = await this.s3.send(
          new DeleteObjectsCommand({
            Bucket: bucket,
            ExpectedBucketOwner: owner,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: false },
          }),
        );
        for (const d of r.Deleted ?? []) if (d.Key) deleted.push(d.Key);
        for (const e of r.Errors ?? [])
          errors.push({ key: e.Key ?? '?', message: `${e.Code ?? 'Error'}: ${e.Message ?? ''}` });
      } catch (e) {
        throw configBucketFailure(e, bucket, 'DeleteObjects', 's3:DeleteObject');
      }
    }
    return { deleted, errors };
  }
}
