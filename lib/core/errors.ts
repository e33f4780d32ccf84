import { DEFAULT_DEPLOYER_ROLE_NAME } from './naming';
/**
 * The error hierarchy of worker-stacks. Every error says what went wrong and
 * what to do next; the original error travels as `cause`.
 */
export class WorkerStacksError extends Error {
  /** What the operator should do about it. */
  public readonly hint?: string;

  constructor(message: string, options: { cause?: unknown; hint?: string } = {}) {
    super(options.hint ? `${message}\n  fix: ${options.hint}` : message, { cause: options.cause });
    this.name = new.target.name;
    this.hint = options.hint;
  }
}

/** One problem found in one input file. */
export interface Problem {
  /** The file the problem is in, as the user named it (e.g. `clusters/prod-eu1.yaml`). */
  readonly file: string;
  /** The field path inside the object (e.g. `spec.listeners[2].port`), or `` for the whole file. */
  readonly path: string;
  /** The rule that was broken, in words, with the offending value. */
  readonly message: string;
  /**
   * The id of the rule that was broken (docs/reference.md lists them; a rendered node config's own checks,
   * `nodeconfig/...` and `bottlerocket/...`, docs/node-configs.md), when the rule is a named one; the message then
   * ends with `(rule <id>)`. Unset for a field's own type or format.
   */
  readonly rule?: string;
}

/** `message` ending with `(rule <id>)` exactly once: where a message already names its rule, it is not named again. */
export function withRuleId(message: string, rule: string | undefined): string {
  return rule === undefined || message.endsWith(`(rule ${rule})`) ? message : `${message} (rule ${rule})`;
}

/** `clusters/x.yaml: spec.listeners[2].port: 70000 is not a port (1-65535)`, and `(rule <id>)` of a named rule. */
export function formatProblem(p: Problem): string {
  const message = withRuleId(p.message, p.rule);
  return p.path ? `${p.file}: ${p.path}: ${message}` : `${p.file}: ${message}`;
}

/** Bad input: refused before anything touches AWS. Carries every problem at once. */
export class ValidationError extends WorkerStacksError {
  public readonly problems: readonly Problem[];

  constructor(problems: readonly Problem[], options: { cause?: unknown } = {}) {
    const n = problems.length;
    super(
      `${n} problem${n === 1 ? '' : 's'} in the cluster objects; nothing was synthesized or deployed:\n` +
        problems.map((p) => `  ${formatProblem(p)}`).join('\n'),
      { cause: options.cause, hint: 'correct the fields named above, then run `worker-stacks validate` again' },
    );
    this.problems = problems;
  }
}

/** A cloud-config template is missing, malformed, or cannot render with the given values. */
export class TemplateError extends WorkerStacksError {}

/** A cluster's node config did not render: the problems as `validate` reports them (file, spec.cloudConfig.template). */
export class RenderError extends TemplateError {
  constructor(public readonly problems: readonly Problem[]) {
    super(problems.map(formatProblem).join('\n'), {
      hint: '`worker-stacks validate` and `worker-stacks render` show the same problem',
    });
  }
}

/**
 * The CDK app refused to synthesize a cluster's stack: an unacknowledged cdk-nag finding, or a check of a construct
 * library. Synthesis runs the code `cdk synth` runs, so `cdk synth` shows the same report.
 */
export class SynthesisError extends WorkerStacksError {}

/** A construct was used in a way it does not support (programming error, thrown at once). */
export class UsageError extends WorkerStacksError {}

/**
 * `worker-stacks review` could not compare the two revisions: a bad base ref, a
 * revision that does not synthesize, an invalid object on one side. Says which
 * side (`base` or `head`) and, where known, which files.
 */
export class ReviewError extends WorkerStacksError {
  /** The side that failed, when the failure belongs to one. */
  public readonly side?: 'base' | 'head';
  /** Input files named by the failure (e.g. `clusters/prod-eu1.yaml`). */
  public readonly files: readonly string[];

  constructor(
    message: string,
    options: { cause?: unknown; hint?: string; side?: 'base' | 'head'; files?: readonly string[] } = {},
  ) {
    super(message, options);
    this.side = options.side;
    this.files = options.files ?? [];
  }
}

/**
 * The config bucket cannot be used: it is not the account's own (S3 refused the request's ExpectedBucketOwner),
 * it does not exist yet, or an asset names a bucket that carries no account. Names the bucket and the bootstrap
 * command; never retried as transient, since nothing changes until someone acts.
 */
export class ConfigBucketError extends WorkerStacksError {
  /** The bucket the request was for. */
  public readonly bucket: string;

  constructor(bucket: string, message: string, options: { cause?: unknown; hint?: string } = {}) {
    super(message, options);
    this.bucket = bucket;
  }
}

/** An answer other than 2xx, with the API server's Status reason (`Conflict`, `Expired`, `NotFound` …). */
export class KubeApiError extends WorkerStacksError {
  constructor(
    public readonly statusCode: number,
    public readonly reason: string,
    public readonly apiMessage: string,
    what: string,
  ) {
    super(`${what}: ${statusCode} ${reason}: ${apiMessage}`, { hint: hintFor(statusCode) });
  }
}

function hintFor(code: number): string {
  if (code === 401) return 'the credentials of the kubeconfig were refused; check --kubeconfig and its current context';
  if (code === 403)
    return 'the identity lacks an RBAC permission; apply the RBAC of deploy/ (worker-stacks crd and the manifests)';
  if (code === 404)
    return 'the object or the WorkerCluster CRD is missing; install the CRD with worker-stacks crd | kubectl apply -f -';
  if (code === 409) return 'someone else changed the object; read it again and retry';
  if (code === 410) return 'the resourceVersion is too old; list again';
  return 'check the API server and the kubeconfig';
}

/** Leader election: this process does not hold the lease (or could not renew it in time), so it starts no AWS write. */
export class NotLeaderError extends WorkerStacksError {
  constructor(identity: string, what: string) {
    super(`${identity} is not the leader (or could not renew its lease in time): ${what} not started`, {
      hint: 'the leader does this work; this replica takes over if the leader stops renewing the lease',
    });
  }
}

/** How the daemon assumes deployer roles, for the bootstrap command its messages name. */
export interface DeployerFlags {
  /** The daemon's --role-name (the deployer role's prefix). @default worker-stacks-deployer */
  readonly roleName?: string;
  /** Whether the daemon passes an --external-id (its value is the daemon's, not repeated here). @default false */
  readonly externalId?: boolean;
}

/**
 * The command that (re)bootstraps one account and region for this daemon, exactly as it must be run there: it makes
 * the deployer and execution roles, and restores either when it was deleted behind CloudFormation's back
 * (lib/engines/stacks/bootstrap-restore.ts). Only the daemon's own principal is a placeholder: the daemon knows the
 * account it runs in, not which role (and path) the account's administrator trusts it as.
 */
export function bootstrapCommand(account: string, region: string, flags: DeployerFlags = {}): string {
  const roleName =
    flags.roleName !== undefined && flags.roleName !== DEFAULT_DEPLOYER_ROLE_NAME
      ? ` --role-name ${flags.roleName}`
      : '';
  const externalId = flags.externalId ? " --external-id <the daemon's --external-id>" : '';
  return `worker-stacks bootstrap --account ${account} --region ${region} --trust <this daemon's role ARN>${roleName}${externalId}`;
}

/**
 * The deployer role of a cluster's account could not be assumed: it does not exist (the account and region are not
 * bootstrapped, or with another --role-name, or the role was deleted), it does not trust this daemon's principal, or
 * the external id differs. Only that account's clusters stop; the message names the role, and the hint the bootstrap
 * command that fixes each of these.
 */
export class AssumeRoleError extends WorkerStacksError {
  constructor(
    public readonly account: string,
    public readonly region: string,
    public readonly roleArn: string,
    cause: unknown,
    flags: DeployerFlags = {},
  ) {
    super(`could not assume ${roleArn} (account ${account}, ${region}): ${messageOf(cause)}`, {
      cause,
      hint: `with credentials of account ${account}, run ${bootstrapCommand(account, region, flags)} (it makes the role, restores it if it was deleted, and sets its trust)`,
    });
  }
}

/** The message of a thrown value: an Error's (or any object's with a text `message`), else the value as text. */
export function messageOf(e: unknown): string {
  return typeof e === 'object' && e !== null && 'message' in e && typeof e.message === 'string' ? e.message : String(e);
}
