import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

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

/** Reads `<stack>.assets.json` of a cloud assembly. */
export function fileAssetsOf(assemblyDir: string, stackArtifactId: string): FileAsset[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(assemblyDir, `${stackArtifactId}.assets.json`), 'utf8'));
  return Object.values<any>(manifest.files ?? {}).flatMap((f) =>
    Object.values<any>(f.destinations).map((d) => ({ sourcePath: path.join(assemblyDir, f.source.path), bucketName: d.bucketName, objectKey: d.objectKey })),
  );
}

/**
 * S3 publishing as `cdk deploy` does it, with S3's own SHA-256 integrity
 * check: an existing key is skipped (its key is its content), a new one is
 * uploaded with ChecksumSHA256 so S3 refuses bytes that changed on the way.
 */
export class S3Publisher implements AssetPublisher {
  constructor(
    private readonly s3: S3Client,
    private readonly region: string,
  ) {}

  public async publish(assets: readonly FileAsset[]): Promise<PublishResult> {
    const result: PublishResult = { uploaded: [], skipped: [] };
    for (const a of assets) {
      if (await this.exists(a)) {
        result.skipped.push(a.objectKey);
        continue;
      }
      const body = fs.readFileSync(a.sourcePath);
      await this.s3.send(
        new PutObjectCommand({
          Bucket: a.bucketName,
          Key: a.objectKey,
          Body: body,
          ChecksumAlgorithm: 'SHA256',
          ChecksumSHA256: createHash('sha256').update(body).digest('base64'),
          ContentType: a.objectKey.endsWith('.json') || a.objectKey.endsWith('.ign') ? 'application/json' : 'text/yaml',
        }),
      );
      result.uploaded.push(a.objectKey);
    }
    return result;
  }

  public templateUrl(asset: FileAsset): string {
    return `https://s3.${this.region}.${s3DnsSuffix(this.region)}/${asset.bucketName}/${asset.objectKey}`;
  }

  private async exists(a: FileAsset): Promise<boolean> {
    try {
      await this.s3.send(new HeadObjectCommand({ Bucket: a.bucketName, Key: a.objectKey }));
      return true;
    } catch (e) {
      const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404 || (e as Error).name === 'NotFound') return false;
      throw e;
    }
  }
}

/** The S3 endpoint domain of a region's partition (China and the isolated regions are not under amazonaws.com). */
export function s3DnsSuffix(region: string): string {
  if (region.startsWith('cn-')) return 'amazonaws.com.cn';
  if (region.startsWith('us-isob-')) return 'sc2s.sgov.gov';
  if (region.startsWith('us-iso-')) return 'c2s.ic.gov';
  return 'amazonaws.com';
}
