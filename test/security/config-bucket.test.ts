import { configBucketName, deployerRoleName, roleArn } from '../../lib/core/naming';
import { ACCOUNT, bootstrapPolicies, decide, PolicyDocument, REGION } from './iam-eval';

/**
 * The config bucket's policy (bootstrap stack with a deployer role), proven with @cloud-copilot/iam-simulate against
 * the deployer role's own policy and an account admin's: only the deployer writes or deletes objects, only with
 * If-None-Match: * (never an overwrite), and nobody uses TLS older than 1.2 or plain HTTP.
 */
const BUCKET = `arn:aws:s3:::${configBucketName(ACCOUNT, REGION)}`;
const OBJECT = `${BUCKET}/clusters/prod-eu1/${'a'.repeat(64)}.ign`;
const DEPLOYER = roleArn(ACCOUNT, REGION, deployerRoleName(REGION));
const ADMIN = `arn:aws:iam::${ACCOUNT}:role/platform-admin`;
const ADMIN_POLICY: PolicyDocument = {
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: 's3:*', Resource: '*' }],
};

let deployerPolicy: PolicyDocument;
let bucketPolicy: PolicyDocument;
beforeAll(() => {
  const p = bootstrapPolicies();
  deployerPolicy = p.deployer;
  bucketPolicy = p.bucket;
});

const tls = (version: string, conditional: boolean) => ({
  'aws:SecureTransport': 'true',
  's3:TlsVersion': version,
  ...(conditional ? { 's3:if-none-match': '*' } : {}),
});

test.each([
  [
    'the deployer puts a new object, conditionally, over TLS 1.3',
    DEPLOYER,
    's3:PutObject',
    tls('1.3', true),
    'Allowed',
  ],
  [
    'the deployer puts without If-None-Match (an overwrite)',
    DEPLOYER,
    's3:PutObject',
    tls('1.3', false),
    'ExplicitlyDenied',
  ],
  ['the deployer puts over TLS 1.1', DEPLOYER, 's3:PutObject', tls('1.1', true), 'ExplicitlyDenied'],
  ['the deployer deletes an old config object', DEPLOYER, 's3:DeleteObject', tls('1.2', false), 'Allowed'],
  ['an account admin puts, conditionally', ADMIN, 's3:PutObject', tls('1.3', true), 'ExplicitlyDenied'],
  ['an account admin deletes', ADMIN, 's3:DeleteObject', tls('1.3', false), 'ExplicitlyDenied'],
  ['an account admin deletes a version', ADMIN, 's3:DeleteObjectVersion', tls('1.3', false), 'ExplicitlyDenied'],
  ['an account admin reads', ADMIN, 's3:GetObject', tls('1.2', false), 'Allowed'],
  [
    'an account admin reads over plain HTTP',
    ADMIN,
    's3:GetObject',
    { 'aws:SecureTransport': 'false' },
    'ExplicitlyDenied',
  ],
])('%s', async (_, principal, action, context, expected) => {
  // GIVEN the principal's own policy and the bucket policy
  const identity = principal === DEPLOYER ? deployerPolicy : ADMIN_POLICY;
  // WHEN it asks
  const d = await decide([identity], {
    principal,
    action,
    resource: OBJECT,
    context: { ...context, 'aws:PrincipalArn': principal },
    resourcePolicy: bucketPolicy,
  });
  // THEN
  expect(d).toBe(expected);
});
