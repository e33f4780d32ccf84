/** An image as EC2's DescribeImages reports it: what a channel checks before it records a release. */
export interface ImageDescription {
  readonly imageId: string;
  readonly name: string;
  readonly architecture: string;
  readonly ownerId: string;
  /** `amazon` for AWS's own images. @default none */
  readonly ownerAlias?: string;
  readonly creationDate?: string;
  readonly deprecationTime?: string;
}

/**
 * Where image channels read their releases (lib/engines/channels): SSM parameters and EC2 images, in one region at a
 * time. The SDK adapter (lib/platform/aws/sdk-image-source.ts) serves it on AWS and moto; a fake serves the paths moto
 * refuses to hold (AWS's public `/aws/service/...` parameters).
 */
export interface ImageSource {
  /** The parameter's value and version in `region`; undefined when there is no such parameter. */
  parameter(region: string, name: string): Promise<{ readonly value: string; readonly version: number } | undefined>;
  /** The images of `imageIds` that exist in `region` (one call for all of them). */
  describeImages(region: string, imageIds: readonly string[]): Promise<readonly ImageDescription[]>;
}
