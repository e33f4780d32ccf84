import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HeadBucketCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { FORMATS, formatByExtension } from '../../model/cloudconfig/formats';
import { ConfigBucketError } from '../../core/errors';

/** One file of a cloud assembly's asset manifest and where it goes. */
export interface FileAsset {
  readonly sourcePath: string;
  readonly bucketName: string;
  readonly objectKey: string;
}

export interface PublishResult {
  readonly uploaded: string[];
  readonly skipped: string[];
}

/** Publishes content-addressed objects. */
export interface AssetPublisher {
  publish(assets: readonly FileAsset[]): Promise<PublishResult>;
  /** URL CloudFormation reads a template from. */
  templateUrl(asset: FileAsset): string;
}

/** The file assets of a `<stack>.assets.json`, as the CDK writes it (the cloud assembly's asset manifest schema). */
interface FileAssetManifest {
  readonly files?: Readonly<
    Record<
      string,
      {
        readonly source: { readonly path: string };
        readonly destinations: Readonly<Record<string, { readonly bucketName: string; readonly objectKey: string }>>;
      }
    >
  >;
}

/** Reads `<stack>.assets.json` of a cloud assembly. */
export function fileAssetsOf(assemblyDir: string, stackArtifactId: string): FileAsset[] {
  const manifest = JSON.parse(
    fs.readFileSync(path.join(assemblyDir, `${stackArtifactId}.assets.json`), 'utf8'),
  ) as FileAssetManifest;
  return Object.values(manifest.files ?? {}).flatMap((f) =>
    Object.values(f.destinations).map((d) => ({
      sourcePath: path.join(assemblyDir, f.source.path),
      bucketName: d.bucketName,
      objectKey: d.objectKey,
    })),
  );
}

/** `worker-stacks-config-<account>-<region>`, as lib/core/naming.ts's configBucketName writes it. */
const CONFIG_BUCKET = /^worker-stacks-config-(\d{12})-([a-z]{2}(?:-[a-z]+)+-\d)$/;

/**
 * The account that must own a config bucket, read from its name (the bootstrap stack of that account and region
 * makes it; synthesis does no lookup, so the name is the only place the account is written). Undefined for any
 * other bucket name.
 */
export function configBucketOwner(bucketName: string): string | undefined {
  return CONFIG_BUCKET.exec(bucketName)?.[1];
}

/** The command that makes the account's own config bucket. */
export function bootstrapCommand(bucketName: string): string {
  const m = CONFIG_BUCKET.exec(bucketName);
  return m
    ? `worker-stacks bootstrap --region ${m[2]} (or npx cdk deploy WorkerStacks-Bootstrap-${m[1]}-${m[2]}) with credentials of account ${m[1]}`
    : 'worker-stacks bootstrap';
}

/**
 * Every request on a config bucket names its owner: S3 refuses it (403) when the bucket belongs to another
 * account, so a missing bootstrap can never put node configs or templates into a bucket someone else created under
 * the predictable name. A bucket name that carries no account is refused before any request.
 */
export function expectedBucketOwner(bucketName: string, objectKey?: string): string {
  const owner = configBucketOwner(bucketName);
  if (!owner) {
    throw new ConfigBucketError(
      bucketName,
      `${objectKey ? `s3://${bucketName}/${objectKey}` : `s3://${bucketName}`}: not a config bucket (worker-stacks-config-<account>-<region>), so its owner cannot be checked; nothing was uploaded`,
      {
        hint: 'publish through a worker stack or bootstrap stack of this version, whose assets go to the config bucket of their account and region',
      },
    );
  }
  return owner;
}

/**
 * An S3 error on a config bucket, said as what it means: 403 with ExpectedBucketOwner set is a bucket of another
 * account (or credentials that may not use it), NoSuchBucket is a bootstrap not done yet. Other errors pass as they
 * are (throttling and network errors stay transient).
 */
export function configBucketFailure(e: unknown, bucketName: string, operation: string, permission: string): unknown {
  const err = e as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  const owner = configBucketOwner(bucketName);
  const status = err.$metadata?.httpStatusCode;
  if (status === 403 || err.name === 'AccessDenied' || err.name === 'Forbidden') {
    return new ConfigBucketError(
      bucketName,
      `s3://${bucketName}: S3 refused ${operation} (HTTP 403) with ExpectedBucketOwner=${owner}: the bucket belongs to another account, or these credentials may not use it; nothing was uploaded`,
      {
        cause: e,
        hint: `run ${bootstrapCommand(bucketName)}: it creates the account's own bucket, or fails if another account holds the name (then that bucket must be removed, or the name freed, before clusters of ${owner} can deploy); if the bucket is the account's own, grant these credentials ${permission} on it`,
      },
    );
  }
  if (err.name === 'NoSuchBucket') {
    return new ConfigBucketError(
      bucketName,
      `s3://${bucketName} does not exist: account ${owner} is not bootstrapped in this region; nothing was uploaded`,
      {
        cause: e,
        hint: `run ${bootstrapCommand(bucketName)}, then run this command again`,
      },
    );
  }
  return e;
}

/**
 * Whether the config bucket exists and is the account's own (HeadBucket with ExpectedBucketOwner): `missing` before
 * the bootstrap stack made it, `own` after; a bucket of another account under the name is a ConfigBucketError, so
 * `worker-stacks bootstrap` refuses before it creates a change set that could only fail.
 */
export async function checkConfigBucket(s3: S3Client, bucketName: string): Promise<'missing' | 'own'> {
  const owner = expectedBucketOwner(bucketName);
  try {
    await s3.send(new HeadBucketCommand({ Bucket: bucketName, ExpectedBucketOwner: owner }));
    return 'own';
  } catch (e) {
    const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status === 404 || (e as Error).name === 'NotFound' || (e as Error).name === 'NoSuchBucket') return 'missing';
    throw configBucketFailure(e, bucketName, 'HeadBucket', 's3:ListBucket');
  }
}

/**
 * S3 publishing as `cdk deploy` does it, with S3's own SHA-256 integrity
 * check: an existing key is skipped (its key is its content), a new one is
 * uploaded with ChecksumSHA256 so S3 refuses bytes that changed on the way,
 * and with If-None-Match: * so S3 refuses to overwrite a key that exists.
 * Every request sends ExpectedBucketOwner, the account in the bucket's name.
 */
export class S3Publisher implements AssetPublisher {
  constructor(
    private readonly s3: S3Client,
    private readonly region: string,
  ) {}

  public async publish(assets: readonly FileAsset[]): Promise<PublishResult> {
    const result: PublishResult = { uploaded: [], skipped: [] };
    // Every asset's bucket is checked before the first request: a batch with a foreign bucket uploads nothing.
    const owners = assets.map((a) => expectedBucketOwner(a.bucketName, a.objectKey));
    for (const [i, a] of assets.entries()) {
      if (await this.exists(a, owners[i])) {
        result.skipped.push(a.objectKey);
        continue;
      }
      const body = fs.readFileSync(a.sourcePath);
      try {
        await this.s3.send(
          new PutObjectCommand({
            Bucket: a.bucketName,
            Key: a.objectKey,
            ExpectedBucketOwner: owners[i],
            Body: body,
            ChecksumAlgorithm: 'SHA256',
            ChecksumSHA256: createHash('sha256').update(body).digest('base64'),
            ContentType: contentType(a.objectKey),
            // A conditional write: S3 refuses it (412) when the key exists, so no object is ever overwritten, even
            // when another writer stored it between our HEAD and this PUT (the config bucket's policy requires it).
            IfNoneMatch: '*',
          }),
        );
      } catch (e) {
        if (isPreconditionFailed(e)) {
          // The key is its content: whoever stored it first stored these bytes (a node verifies them at boot).
          result.skipped.push(a.objectKey);
          continue;
        }
        throw configBucketFailure(e, a.bucketName, 'PutObject', 's3:PutObject');
      }
      result.uploaded.push(a.objectKey);
    }
    return result;
  }

  /** The template URL, for an asset of a config bucket only: CloudFormation reads the template we uploaded. */
  public templateUrl(asset: FileAsset): string {
    expectedBucketOwner(asset.bucketName, asset.objectKey);
    return `https://s3.${this.region}.${s3DnsSuffix(this.region)}/${asset.bucketName}/${asset.objectKey}`;
  }

  private async exists(a: FileAsset, owner: string): Promise<boolean> {
    try {
      await this.s3.send(new HeadObjectCommand({ Bucket: a.bucketName, Key: a.objectKey, ExpectedBucketOwner: owner }));
      return true;
    } catch (e) {
      const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      // A missing bucket is a 404 too (HEAD has no body to say which): the PutObject after it says NoSuchBucket.
      if (status === 404 || (e as Error).name === 'NotFound') return false;
      throw configBucketFailure(e, a.bucketName, 'HeadObject', 's3:GetObject');
    }
  }
}

/** S3's answer to a conditional write whose key exists: 412 PreconditionFailed. */
function isPreconditionFailed(e: unknown): boolean {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } };
  return err.name === 'PreconditionFailed' || err.$metadata?.httpStatusCode === 412;
}

/** The S3 endpoint domain of a region's partition (China and the isolated regions are not under amazonaws.com). */
export function s3DnsSuffix(region: string): string {
  if (region.startsWith('cn-')) return 'amazonaws.com.cn';
  if (region.startsWith('us-isob-')) return 'sc2s.sgov.gov';
  if (region.startsWith('us-iso-')) return 'c2s.ic.gov';
  return 'amazonaws.com';
}

/** The stored object's Content-Type: the node-config format's, by extension (templates for TemplateURL are JSON). */
function contentType(key: string): string {
  const ext = key.slice(key.lastIndexOf('.') + 1);
  if (ext === 'json') return 'application/json';
  const format = formatByExtension(ext);
  return format ? FORMATS[format].contentType : 'application/octet-stream';
}
