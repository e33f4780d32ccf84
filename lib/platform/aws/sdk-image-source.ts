import type * as Ec2 from '@aws-sdk/client-ec2';
import type * as Ssm from '@aws-sdk/client-ssm';
import { ImageDescription, ImageSource } from '../../model/ports/image-source';
import { lazyModule } from '../../core/lazy-module';

// Loaded when a channel is first read (lib/core/lazy-module.ts): most runs read none.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
const ec2 = lazyModule(() => require('@aws-sdk/client-ec2') as typeof Ec2);
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
const ssm = lazyModule(() => require('@aws-sdk/client-ssm') as typeof Ssm);

/** The image channels' reads on AWS (or moto, through AWS_ENDPOINT_URL): SSM GetParameter and EC2 DescribeImages. */
export class SdkImageSource implements ImageSource {
  private readonly ssm = new Map<string, Ssm.SSMClient>();
  private readonly ec2 = new Map<string, Ec2.EC2Client>();

  constructor(private readonly clientConfig: { readonly credentials?: unknown } = {}) {}

  public async parameter(region: string, name: string) {
    try {
      const out = await this.ssmIn(region).send(new (ssm().GetParameterCommand)({ Name: name }));
      const p = out.Parameter;
      return p?.Value === undefined ? undefined : { value: p.Value, version: p.Version ?? 0 };
    } catch (e) {
      if ((e as { name?: string }).name === 'ParameterNotFound') return undefined;
      throw e;
    }
  }

  public async describeImages(region: string, imageIds: readonly string[]): Promise<readonly ImageDescription[]> {
    if (imageIds.length === 0) return [];
    // A filter, not ImageIds: EC2 refuses the whole call when one of ImageIds does not exist.
    const out = await this.ec2In(region).send(
      new (ec2().DescribeImagesCommand)({
        Filters: [{ Name: 'image-id', Values: [...imageIds] }],
        IncludeDeprecated: true,
      }),
    );
    return (out.Images ?? []).flatMap((i) =>
      i.ImageId === undefined
        ? []
        : [
            {
              imageId: i.ImageId,
              name: i.Name ?? i.ImageId,
              architecture: i.Architecture ?? 'unknown',
              ownerId: i.OwnerId ?? 'unknown',
              ...(i.ImageOwnerAlias ? { ownerAlias: i.ImageOwnerAlias } : {}),
              ...(i.CreationDate ? { creationDate: i.CreationDate } : {}),
              ...(i.DeprecationTime ? { deprecationTime: i.DeprecationTime } : {}),
            },
          ],
    );
  }

  private ssmIn(region: string): Ssm.SSMClient {
    let c = this.ssm.get(region);
    if (!c) this.ssm.set(region, (c = new (ssm().SSMClient)({ ...this.clientConfig, region } as object)));
    return c;
  }

  private ec2In(region: string): Ec2.EC2Client {
    let c = this.ec2.get(region);
    if (!c) this.ec2.set(region, (c = new (ec2().EC2Client)({ ...this.clientConfig, region } as object)));
    return c;
  }
}
