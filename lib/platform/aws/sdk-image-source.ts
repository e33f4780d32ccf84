import { DescribeImagesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { ImageDescription, ImageSource } from '../../model/ports/image-source';

/** The image channels' reads on AWS (or moto, through AWS_ENDPOINT_URL): SSM GetParameter and EC2 DescribeImages. */
export class SdkImageSource implements ImageSource {
  private readonly ssm = new Map<string, SSMClient>();
  private readonly ec2 = new Map<string, EC2Client>();

  constructor(private readonly clientConfig: { readonly credentials?: unknown } = {}) {}

  public async parameter(region: string, name: string) {
    try {
      const out = await this.ssmIn(region).send(new GetParameterCommand({ Name: name }));
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
      new DescribeImagesCommand({ Filters: [{ Name: 'image-id', Values: [...imageIds] }], IncludeDeprecated: true }),
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

  private ssmIn(region: string): SSMClient {
    let c = this.ssm.get(region);
    if (!c) this.ssm.set(region, (c = new SSMClient({ ...this.clientConfig, region } as object)));
    return c;
  }

  private ec2In(region: string): EC2Client {
    let c = this.ec2.get(region);
    if (!c) this.ec2.set(region, (c = new EC2Client({ ...this.clientConfig, region } as object)));
    return c;
  }
}
