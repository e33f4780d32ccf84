import { StackSummary } from '../../model/ports/cloudformation-port';
import { IamRolePort } from '../../model/ports/iam-port';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { executionRoleName } from '../../core/naming';
import { SynthesizedStack } from '../synthesis/synthesize';
import { namedRoles, withoutResources } from '../stacks/bootstrap-restore';
import { DeployClients, DeployOptions, deployStack } from './change-sets';

export interface BootstrapDeployOptions extends DeployOptions {
  /** The bootstrap stack's region (which of its roles is the execution role). */
  readonly region: string;
  /** IAM, with the account's own credentials: does each role the live stack made still exist? */
  readonly roles: IamRolePort;
  /** Tells the operator what is done beside the deployment (a role restored). */
  readonly say: (line: string) => void;
}

/**
 * `worker-stacks bootstrap`'s deployment: a role of the live stack that was deleted behind CloudFormation's back is
 * restored first (lib/engines/stacks/bootstrap-restore.ts says why and how): the stack is deployed once without the
 * missing roles and what refers to them, then with the whole template, which creates them again. With nothing
 * missing, it is deployStack alone: one IAM GetRole per role, no other call, no change.
 */
export async function deployBootstrapStack(
  clients: DeployClients,
  synth: SynthesizedStack,
  name: string,
  opts: BootstrapDeployOptions,
): Promise<StackSummary> {
  const live = await clients.cfn.describeStack(synth.stackName);
  // No stack, one in progress (deployStack waits for it), or a failed create (it made no role): nothing to restore.
  if (!live || live.status.endsWith('_IN_PROGRESS') || live.status === 'ROLLBACK_COMPLETE')
    return deployStack(clients, synth, name, opts);
  // The roles the live stack made that the new template keeps, under the same name (a role the template drops or
  // renames is deleted or replaced by CloudFormation anyway).
  const wanted = new Map(namedRoles(synth.templateBody).map((r) => [r.logicalId, r.roleName]));
  const kept = namedRoles((await clients.cfn.getTemplate(synth.stackName)) ?? '').filter(
    (r) => wanted.get(r.logicalId) === r.roleName,
  );
  const missing = [];
  for (const role of kept) if (!(await opts.roles.roleExists(role.roleName))) missing.push(role);
  if (missing.length === 0) return deployStack(clients, synth, name, opts);
  for (const role of missing) {
    const kind = role.roleName === executionRoleName(opts.region) ? 'execution role' : 'deployer role';
    opts.say(`${kind} ${role.roleName} is missing: restoring it`);
    opts.log.warn(
      { role: role.roleName, logicalId: role.logicalId },
      `${kind} ${role.roleName} is missing: restoring it`,
    );
  }
  const without = withoutResources(
    synth.templateBody,
    missing.map((r) => r.logicalId),
  );
  opts.log.info(
    { removed: without.removed },
    `deploying ${synth.stackName} without ${without.removed.join(', ')} first`,
  );
  await deployStack(
    clients,
    { ...synth, templateBody: without.templateBody },
    `ws-${sha256Hex(without.templateBody).slice(0, 32)}`,
    { ...opts, executedIsEarlier: true },
  );
  return deployStack(clients, synth, name, { ...opts, executedIsEarlier: true });
}
