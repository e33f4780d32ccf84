import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { WorkerStacksError } from '../../core/errors';
import { PROJECT_ROOT } from '../../core/paths';
import { RegionWants } from './examples';

const SEED = path.join(PROJECT_ROOT, 'tools', 'moto', 'seed.py');

/**
 * Creates in the emulator at `endpoint` the VPCs, subnets, images, security groups, prefix lists and certificates
 * the objects name (tools/moto/seed.py, boto3), and returns which new id stands for which old one.
 */
export function seedNetwork(
  endpoint: string,
  wants: Readonly<Record<string, RegionWants>>,
  python = 'python3',
): Record<string, string> {
  const r = spawnSync(python, [SEED, endpoint], { input: JSON.stringify(wants), encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) {
    throw new WorkerStacksError(
      `creating the examples' network in moto failed: ${(r.stderr || String(r.error ?? '')).trim().split('\n').slice(-3).join(' ')}`,
      {
        hint: 'check that moto and boto3 are installed (bash .ci/install-tools)',
      },
    );
  }
  return JSON.parse(r.stdout) as Record<string, string>;
}
