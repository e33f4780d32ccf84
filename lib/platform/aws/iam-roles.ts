import { STSClient } from '@aws-sdk/client-sts';
import { WorkerStacksError } from '../../core/errors';
import { partitionOf } from '../../core/naming';
import { IamRolePort } from '../../model/ports/iam-port';
import { awsTimeouts, AwsTimeouts } from './clients';

/**
 * IAM's global endpoint and signing region of each partition (IAM has one endpoint per partition, not per region).
 * @internal exported for its tests
 */
export function iamEndpoint(
  region: string,
  env: NodeJS.ProcessEnv = process.env,
): { readonly url: string; readonly signingRegion: string } {
  const p = partitionOf(region);
  const signingRegion = p === 'aws-cn' ? 'cn-north-1' : p === 'aws-us-gov' ? 'us-gov-west-1' : 'us-east-1';
  // The SDK's own variables (as every client of awsClients reads them), so an emulator needs no code change.
  const configured = env.AWS_ENDPOINT_URL_IAM ?? env.AWS_ENDPOINT_URL;
  if (configured) return { url: configured, signingRegion };
  const url =
    p === 'aws-cn'
      ? 'https://iam.cn-north-1.amazonaws.com.cn'
      : p === 'aws-us-gov'
        ? 'https://iam.us-gov.amazonaws.com'
        : 'https://iam.amazonaws.com';
  return { url, signingRegion };
}

/** The parts of a resolved SDK client config this file uses (typed by hand: @smithy/types is not a dependency). */
interface SigningConfig {
  readonly signer: (authScheme?: unknown) => Promise<{
    sign(
      request: SignableRequest,
      options: { signingRegion: string; signingService: string },
    ): Promise<SignableRequest>;
  }>;
}
interface SignableRequest {
  method: string;
  protocol: string;
  hostname: string;
  port?: number;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: string;
}

/**
 * IAM's GetRole, with the credentials of the STS client given (the caller's own: bootstrap runs with the account's
 * credentials), signed by that client's own SigV4 signer for the service `iam`, over IAM's Query API. This package
 * does not depend on @aws-sdk/client-iam for one read-only call; with that client, this is `GetRoleCommand` and the
 * `NoSuchEntityException` name, behind the same port.
 */
export class SdkIamRoles implements IamRolePort {
  constructor(
    private readonly sts: STSClient,
    private readonly region: string,
    private readonly timeouts: AwsTimeouts = awsTimeouts(),
  ) {}

  public async roleExists(roleName: string): Promise<boolean> {
    const { url, signingRegion } = iamEndpoint(this.region);
    const endpoint = new URL(url);
    const body = new URLSearchParams({ Action: 'GetRole', Version: '2010-05-08', RoleName: roleName }).toString();
    const request: SignableRequest = {
      method: 'POST',
      protocol: endpoint.protocol,
      hostname: endpoint.hostname,
      port: endpoint.port ? Number(endpoint.port) : undefined,
      path: endpoint.pathname || '/',
      query: {},
      headers: { host: endpoint.host, 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body,
    };
    const signer = await (this.sts.config as unknown as SigningConfig).signer();
    const signed = await signer.sign(request, { signingRegion, signingService: 'iam' });
    const headers = Object.fromEntries(Object.entries(signed.headers).filter(([k]) => k.toLowerCase() !== 'host'));
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(this.timeouts.connectionTimeoutMs + this.timeouts.requestTimeoutMs),
      });
    } catch (e) {
      throw new WorkerStacksError(`IAM GetRole ${roleName}: ${(e as Error).message}`, {
        cause: e,
        hint: 'check the network to IAM (or AWS_ENDPOINT_URL_IAM) and run the command again',
      });
    }
    const text = await response.text();
    if (response.ok) return true;
    const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? `HTTP ${response.status}`;
    if (code === 'NoSuchEntity') return false;
    const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
    throw new WorkerStacksError(`IAM GetRole ${roleName} answered ${code}${message ? `: ${message}` : ''}`, {
      hint: "bootstrap checks that the stack's roles exist with the account's own credentials: they need iam:GetRole on them",
    });
  }
}
