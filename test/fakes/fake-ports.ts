import * as fs from 'node:fs';
import { IdentityPort } from '../../lib/platform/aws/identity';
import { AssetPublisher, FileAsset, PublishResult } from '../../lib/platform/aws/s3-publisher';
import { Logger } from '../../lib/core/logger';

/** Time that moves only when told to (the fake CloudFormation moves it while a wait polls). */
export class FakeClock {
  constructor(public ms = Date.parse('2030-01-01T00:00:00.000Z')) {}
  public readonly now = (): Date => new Date(this.ms);
  public advance(ms: number): void {
    this.ms += ms;
  }
}

/** A content-addressed bucket in memory: existing keys are skipped, as the S3 publisher does. */
export class FakePublisher implements AssetPublisher {
  public readonly objects = new Map<string, Buffer>();
  public readonly uploads: string[] = [];
  public calls = 0;

  public async publish(assets: readonly FileAsset[]): Promise<PublishResult> {
    this.calls++;
    const result: PublishResult = { uploaded: [], skipped: [] };
    for (const a of assets) {
      const key = `${a.bucketName}/${a.objectKey}`;
      if (this.objects.has(key)) {
        result.skipped.push(a.objectKey);
        continue;
      }
      this.objects.set(key, fs.readFileSync(a.sourcePath));
      this.uploads.push(a.objectKey);
      result.uploaded.push(a.objectKey);
    }
    return result;
  }

  public templateUrl(asset: FileAsset): string {
    return `https://s3.fake/${asset.bucketName}/${asset.objectKey}`;
  }

  /** What CloudFormation would read at a templateUrl. */
  public readonly read = (url: string): string => {
    const body = this.objects.get(url.replace('https://s3.fake/', ''));
    if (!body) throw new Error(`fake S3: no object at ${url}`);
    return body.toString('utf8');
  };
}

/** STS that always answers with one account. */
export class FixedIdentity implements IdentityPort {
  public calls = 0;
  constructor(private readonly accountId: string) {}
  public async account(): Promise<string> {
    this.calls++;
    return this.accountId;
  }
}

export interface LogEntry {
  readonly level: 'info' | 'warn' | 'error';
  readonly bindings: Readonly<Record<string, unknown>>;
  readonly obj: object;
  readonly msg?: string;
}

/** A Logger that keeps every line (with its child bindings) for assertions. */
export class RecordingLogger implements Logger {
  constructor(
    public readonly entries: LogEntry[] = [],
    private readonly bindings: Record<string, unknown> = {},
  ) {}
  public info(obj: object, msg?: string): void {
    this.entries.push({ level: 'info', bindings: this.bindings, obj, msg });
  }
  public warn(obj: object, msg?: string): void {
    this.entries.push({ level: 'warn', bindings: this.bindings, obj, msg });
  }
  public error(obj: object, msg?: string): void {
    this.entries.push({ level: 'error', bindings: this.bindings, obj, msg });
  }
  public child(bindings: object): Logger {
    return new RecordingLogger(this.entries, { ...this.bindings, ...bindings });
  }
  /** Lines of one cluster. */
  public of(cluster: string): LogEntry[] {
    return this.entries.filter((e) => e.bindings.cluster === cluster);
  }
}
