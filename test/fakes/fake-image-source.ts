import { ImageDescription, ImageSource } from '../../lib/model/ports/image-source';

/**
 * ImageSource in memory: parameters and images by region, and a count of the reads. It serves what moto refuses to
 * hold (AWS's public `/aws/service/...` parameters); test/integration/image-channel-moto.test.ts runs the same checks
 * through the SDK adapter on moto.
 */
export class FakeImageSource implements ImageSource {
  public readonly params = new Map<string, { value: string; version: number }>();
  public readonly images = new Map<string, ImageDescription>();
  public parameterReads = 0;
  public describeCalls = 0;

  public setParameter(region: string, name: string, value: string): void {
    const key = `${region}\0${name}`;
    this.params.set(key, { value, version: (this.params.get(key)?.version ?? 0) + 1 });
  }

  public addImage(region: string, image: ImageDescription): void {
    this.images.set(`${region}\0${image.imageId}`, image);
  }

  public parameter(region: string, name: string) {
    this.parameterReads++;
    return Promise.resolve(this.params.get(`${region}\0${name}`));
  }

  public describeImages(region: string, imageIds: readonly string[]) {
    this.describeCalls++;
    return Promise.resolve(imageIds.flatMap((id) => this.images.get(`${region}\0${id}`) ?? []));
  }
}
