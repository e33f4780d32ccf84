import * as fs from 'node:fs';
import * as path from 'node:path';
import { FileAssetPackaging, Stack, Stage } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { UsageError } from '../../core/errors';

export interface NodeConfigObjectProps {
  /** Exactly the bytes to store. */
  readonly bytes: Buffer;
  /** SHA-256 of `bytes`, hex; it becomes the object key. */
  readonly checksum: string;
  /** Extension of the object key, without dot. */
  readonly extension: string;
  /** The key the stack synthesizer must produce; a synthesizer that puts it elsewhere is refused. */
  readonly expectedKey: string;
}

/**
 * The big node config as a stack file asset, content-addressed: its object
 * key is its checksum, so `cdk deploy` and the reconciler publish it through
 * the same asset manifest, and an object is never overwritten while old nodes
 * still fetch it.
 */
export class NodeConfigObject extends Construct {
  public readonly bucketName: string;
  public readonly objectKey: string;
  /** `s3://bucket/key`, what Ignition and the cloud-init bootstrap fetch. */
  public readonly s3Url: string;

  constructor(scope: Construct, id: string, props: NodeConfigObjectProps) {
    super(scope, id);
    const stage = Stage.of(this);
    if (!stage) throw new UsageError('NodeConfigObject must be inside an App or Stage');
    const fileName = `asset.${props.checksum}.${props.extension}`;
    const target = path.join(stage.assetOutdir, fileName);
    if (!fs.existsSync(target)) {
      fs.mkdirSync(stage.assetOutdir, { recursive: true });
      const tmp = `${target}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, props.bytes);
      fs.renameSync(tmp, target);
    }
    const location = Stack.of(this).synthesizer.addFileAsset({
      sourceHash: props.checksum,
      fileName,
      packaging: FileAssetPackaging.FILE,
    });
    if (location.objectKey !== props.expectedKey) {
      throw new UsageError(
        `the stack synthesizer put the node config at ${location.objectKey}, expected ${props.expectedKey}`,
        {
          hint: 'worker stacks must use the synthesizer from lib/engines/stacks/worker-stack.ts (content-addressed keys under the cluster prefix)',
        },
      );
    }
    this.bucketName = location.bucketName;
    this.objectKey = location.objectKey;
    this.s3Url = `s3://${this.bucketName}/${this.objectKey}`;
  }
}
