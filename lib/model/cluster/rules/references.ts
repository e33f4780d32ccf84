import { Found, Loose, obj, str } from './loose';
import { found } from './rule-registry';
import { secretReferences } from '../values/secret-values';
/**
 * References to other AWS resources must live where the cluster lives: a secret in another account or region
 * would fail at boot (the node role can read only its own account's secrets, and the node asks its own region),
 * an ACM certificate in another region cannot be attached to the load balancer at all. Both would pass
 * synthesis and fail on a node or in a change set, so they are refused here, with both sides named.
 */

/** The ARN partition of a region (`aws`, `aws-cn`, `aws-us-gov`, `aws-iso`, `aws-iso-b` ...). */
export function partitionOf(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  const iso = /^[a-z]{2}-iso([a-z]?)-/.exec(region);
  if (iso) return iso[1] ? `aws-iso-${iso[1]}` : 'aws-iso';
  return 'aws';
}

function arnProblems(
  at: string,
  arn: string | undefined,
  what: string,
  account: string | undefined,
  region: string | undefined,
): Found[] {
  const m = arn ? /^arn:([a-z-]+):[a-z0-9-]+:([a-z0-9-]*):(\d{12}):/.exec(arn) : null;
  if (!m) return []; // a malformed ARN is the schema's to report
  const out: Found[] = [];
  if (region && m[2] !== region)
    out.push(
      found(
        'reference-in-cluster',
        at,
        `${what} is in region ${m[2]}, the cluster in ${region} (use ${what} of ${region})`,
      ),
    );
  if (account && m[3] !== account)
    out.push(
      found(
        'reference-in-cluster',
        at,
        `${what} is in account ${m[3]}, the cluster in ${account} (use ${what} of account ${account})`,
      ),
    );
  if (region && m[1] !== partitionOf(region))
    out.push(
      found(
        'reference-in-cluster',
        at,
        `${what} is in partition ${m[1]}, but region ${region} is in ${partitionOf(region)}`,
      ),
    );
  return out;
}

/**
 * The secrets a cluster may name: those whose name starts with `worker-stacks/<cluster name>/`. Validation refuses any
 * other name, and the IAM side (lib/engines/stacks: the node role and its boundary) allows GetSecretValue only under the same
 * prefix, so an object (whoever may write it: a pull request, a namespace editor) can never make its nodes read, and
 * send to the apiEndpoint it also chooses, another team's secret.
 */
export function clusterSecretPrefix(clusterName: string): string {
  return `worker-stacks/${clusterName}/`;
}

/** The secret name of a Secrets Manager ARN (`arn:...:secret:<name>`), or undefined. */
export function secretNameOf(arn: string): string | undefined {
  return /^arn:[a-z-]+:secretsmanager:[a-z0-9-]*:\d{12}:secret:(.+)$/.exec(arn)?.[1];
}

function secretScopeProblems(at: string, arn: string | undefined, clusterName: string | undefined): Found[] {
  const secret = arn === undefined ? undefined : secretNameOf(arn);
  if (secret === undefined || clusterName === undefined) return []; // malformed: the schema's to report
  const prefix = clusterSecretPrefix(clusterName);
  if (secret.startsWith(prefix) && secret.length > prefix.length) return [];
  return [
    found(
      'secret-scope',
      at,
      `the secret ${JSON.stringify(secret)} is not one of this cluster's: its name must start with ${prefix} (the nodes of cluster ${clusterName} may read only those; create the secret under that name)`,
    ),
  ];
}

export function referenceProblems(spec: Loose, clusterName?: string): Found[] {
  // A malformed account or region is the schema's to report; comparing with it would only repeat that.
  const account = /^\d{12}$/.test(str(spec.account) ?? '') ? str(spec.account) : undefined;
  const region = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$/.test(str(spec.region) ?? '') ? str(spec.region) : undefined;
  // Every secret a template value names, the cluster's or a pool's (secret-values.ts), is the cluster's own.
  const out: Found[] = [];
  for (const ref of secretReferences(spec)) {
    // bootstrapTokenSecretArn's shape is the schema's to report; any other value's is not checked anywhere else.
    if (secretNameOf(ref.arn) === undefined && ref.path !== 'spec.cloudConfig.values.bootstrapTokenSecretArn') {
      out.push(
        found(
          'secret-arn',
          ref.path,
          `${JSON.stringify(ref.arn)} is not a Secrets Manager secret ARN (arn:<partition>:secretsmanager:<region>:<account>:secret:<name>); name the secret by its full ARN`,
        ),
      );
      continue;
    }
    out.push(...arnProblems(ref.path, ref.arn, 'the secret', account, region));
    out.push(...secretScopeProblems(ref.path, ref.arn, clusterName));
  }
  const listeners = Array.isArray(spec.listeners) ? spec.listeners : [];
  listeners.forEach((l, i) =>
    out.push(
      ...arnProblems(
        `spec.listeners[${i}].certificateArn`,
        str(obj(l).certificateArn),
        'the certificate',
        account,
        region,
      ),
    ),
  );
  return out;
}
