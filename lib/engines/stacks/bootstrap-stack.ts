import {
  CfnOutput,
  DockerImageAssetLocation,
  DockerImageAssetSource,
  FileAssetLocation,
  FileAssetSource,
  ISynthesisSession,
  RemovalPolicy,
  Stack,
  StackSynthesizer,
  Validations,
} from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { UsageError } from '../../core/errors';
import { BootstrapRoles, DeployerTrust } from './bootstrap-roles';
import { BOOTSTRAP_STACK_NAME, bootstrapStackId, configBucketName, deployerRoleName, roleArn } from '../../core/naming';

/**
 * A synthesizer for the stack that must deploy before any bucket exists: the template is not an asset (so the CDK
 * CLI sends it inline as TemplateBody, with the caller's own credentials) and no CDK bootstrap role, bucket or
 * version parameter is named, so `cdk deploy` works in an account that was never `cdk bootstrap`ped.
 * CliCredentialsStackSynthesizer, by contrast, uploads the template to the CDK asset bucket first.
 */
export class InlineTemplateSynthesizer extends StackSynthesizer {
  public addFileAsset(asset: FileAssetSource): FileAssetLocation {
    throw new UsageError(
      `${this.boundStack.stackName} cannot hold file asset ${asset.sourceHash}: it deploys before any bucket exists`,
      { hint: 'keep the bootstrap stack free of assets (no Lambda code, no files)' },
    );
  }

  public addDockerImageAsset(asset: DockerImageAssetSource): DockerImageAssetLocation {
    throw new UsageError(
      `${this.boundStack.stackName} cannot hold image asset ${asset.sourceHash}: it deploys before any repository exists`,
      { hint: 'keep the bootstrap stack free of assets' },
    );
  }

  public synthesize(session: ISynthesisSession): void {
    this.synthesizeTemplate(session);
    // No stackTemplateAssetObjectUrl: the CLI deploys the template inline (it is far below CloudFormation's 51,200 bytes).
    this.emitArtifact(session, {});
  }
}

export interface BootstrapStackProps {
  /** AWS account. */
  readonly account: string;
  /** AWS region. */
  readonly region: string;
  /** Who may assume the deployer role (a daemon in another account). @default no deployer or execution role */
  readonly trust?: DeployerTrust;
}

/**
 * `WorkerStacks-Bootstrap`, once per account and region (like `cdk bootstrap`):
 * the private, encrypted, TLS-only config bucket every worker stack publishes to.
 */
export class BootstrapStack extends Stack {
  public readonly bucket: s3.Bucket;
  public readonly roles: BootstrapRoles;

  constructor(scope: Construct, props: BootstrapStackProps) {
    super(scope, bootstrapStackId(props.account, props.region), {
      stackName: BOOTSTRAP_STACK_NAME,
      env: { account: props.account, region: props.region },
      description:
        'Config bucket of worker-stacks (content-addressed node configs), node boundary, deployer and execution roles',
      synthesizer: new InlineTemplateSynthesizer(),
    });
    this.bucket = new s3.Bucket(this, 'ConfigBucket', {
      bucketName: configBucketName(props.account, props.region),
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // Denies every request made with TLS older than 1.2 (s3:TlsVersion), beside enforceSSL's plain-HTTP deny.
      minimumTLSVersion: 1.2,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      // Nodes of a live launch template still fetch their object: never delete the bucket with the stack.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    new CfnOutput(this, 'ConfigBucketName', { value: this.bucket.bucketName });
    this.roles = new BootstrapRoles(this, 'Roles', {
      account: props.account,
      region: props.region,
      trust: props.trust,
    });
    if (props.trust) {
      for (const statement of configBucketWriteStatements(
        this.bucket.bucketArn,
        roleArn(props.account, props.region, deployerRoleName(props.region, props.trust.roleName)),
      )) {
        this.bucket.addToResourcePolicy(statement);
      }
    }
    if (this.roles.deployerRole) new CfnOutput(this, 'DeployerRoleArn', { value: this.roles.deployerRole.roleArn });
    if (this.roles.executionRole) new CfnOutput(this, 'ExecutionRoleArn', { value: this.roles.executionRole.roleArn });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Objects are immutable and content-addressed; reads are audited with CloudTrail S3 data events, which the account baseline enables. A log bucket per region would need its own exemption.',
    });
  }
}

/**
 * With a deployer role (many-accounts mode), the config bucket's objects are written and deleted by the deployer
 * role alone, and only with conditional writes (If-None-Match: *), so no object is ever overwritten, by anyone:
 * nodes of a launch template still in use fetch their object while a roll is under way. The literal role ARN, not
 * the role's token, so the bucket policy does not wait for the role. Without a deployer role (single-credential
 * mode) the account's own principals write with their own IAM rights and `cdk deploy` uploads without a condition:
 * there, versioning keeps every version and each node verifies its object's SHA-256 before it boots (fail closed).
 */
export function configBucketWriteStatements(bucketArn: string, deployerRoleArn: string): iam.PolicyStatement[] {
  return [
    new iam.PolicyStatement({
      sid: 'OnlyTheDeployerWrites',
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: [
        's3:PutObject',
        's3:DeleteObject',
        's3:DeleteObjectVersion',
        's3:PutObjectTagging',
        's3:PutObjectRetention',
        's3:PutObjectLegalHold',
      ],
      resources: [`${bucketArn}/*`],
      conditions: { ArnNotEquals: { 'aws:PrincipalArn': deployerRoleArn } },
    }),
    new iam.PolicyStatement({
      sid: 'NoOverwrite',
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['s3:PutObject'],
      resources: [`${bucketArn}/*`],
      conditions: { Null: { 's3:if-none-match': 'true' } },
    }),
  ];
}
