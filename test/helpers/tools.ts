import { spawnSync, SpawnSyncOptions } from 'node:child_process';
import * as fs from 'node:fs';

/**
 * External tools the tests run for real. A missing tool fails the test with
 * the install command; it never skips. `.ci/run` installs all of them.
 */
export const TOOLS = {
  'ignition-validate': { path: '/usr/bin/ignition-validate', install: 'apt-get install -y ignition' },
  ignition: { path: '/usr/lib/dracut/modules.d/30ignition/ignition', install: 'apt-get install -y ignition' },
  setfiles: { path: '/usr/sbin/setfiles', install: 'apt-get install -y policycoreutils' },
  'cloud-init': { path: '/usr/bin/cloud-init', install: 'apt-get install -y cloud-init' },
  'cfn-lint': { path: 'cfn-lint', install: 'pip install cfn-lint (the machine Python ships it)' },
  python3: { path: 'python3', install: 'install Python 3.11 with moto' },
} as const;

export type ToolName = keyof typeof TOOLS;

export function requireTool(name: ToolName): string {
  const tool = TOOLS[name];
  const found = tool.path.startsWith('/') ? fs.existsSync(tool.path) : spawnSync('sh', ['-c', `command -v ${tool.path}`]).status === 0;
  if (!found) throw new Error(`${name} is not installed (${tool.path}); install it with: ${tool.install} — or run bash .ci/run, which installs everything`);
  return tool.path;
}

export interface RunResult {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function run(cmd: string, args: readonly string[], opts: SpawnSyncOptions = {}): RunResult {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 120_000, ...opts });
  if (r.error) throw r.error;
  return { status: r.status ?? -1, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? '') };
}
