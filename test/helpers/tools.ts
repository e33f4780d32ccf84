import { spawnSync, SpawnSyncOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The PyPI pins of .ci/install-tools (keep both in step). */
export const PINS = { moto: '5.2.5', cfnLint: '1.58.', checkov: '3.3.30' } as const;

/** checkov's own venv (its dependency pins fight moto's), outside the repository, where .ci/install-tools puts it. */
export const CHECKOV_VENV = path.join(
  process.env.WORKER_STACKS_TOOLS_CACHE ?? path.join(os.homedir(), '.cache', 'worker-stacks'),
  'venvs',
  `checkov-${PINS.checkov}`,
);

const PIP = 'bash .ci/install-tools (or python3 -m pip install';

/**
 * External tools the tests run for real. A missing tool, or one at another version than .ci/install-tools pins,
 * fails the test with the install command; it never skips. `.ci/run` installs all of them.
 */
export const TOOLS: Record<string, { path: string; install: string; version?: { args: string[]; expect: RegExp } }> = {
  'ignition-validate': { path: '/usr/bin/ignition-validate', install: 'apt-get install -y ignition' },
  ignition: { path: '/usr/lib/dracut/modules.d/30ignition/ignition', install: 'apt-get install -y ignition' },
  setfiles: { path: '/usr/sbin/setfiles', install: 'apt-get install -y policycoreutils' },
  'cloud-init': { path: '/usr/bin/cloud-init', install: 'apt-get install -y cloud-init' },
  'cfn-lint': {
    path: 'cfn-lint',
    install: `${PIP} 'cfn-lint==${PINS.cfnLint}*')`,
    // 1.58 is the first series that knows the AutoScalingInstanceRefresh update policy the worker stacks may use.
    version: { args: ['--version'], expect: new RegExp(`^cfn-lint ${PINS.cfnLint.replace(/\./g, '\\.')}\\d+\\s*$`) },
  },
  checkov: {
    path: path.join(CHECKOV_VENV, 'bin', 'checkov'),
    install: `${PIP} -m venv ${CHECKOV_VENV} && ${CHECKOV_VENV}/bin/pip install checkov==${PINS.checkov})`,
    version: { args: ['--version'], expect: new RegExp(`^${PINS.checkov.replace(/\./g, '\\.')}\\s*$`) },
  },
  python3: { path: 'python3', install: `${PIP} 'moto[server]==${PINS.moto}')` },
};

export type ToolName =
  'ignition-validate' | 'ignition' | 'setfiles' | 'cloud-init' | 'cfn-lint' | 'checkov' | 'python3';

const checked = new Map<string, string>();

/** The tool's path, once it is there at the pinned version; otherwise an error with the install command. */
export function requireTool(name: ToolName): string {
  const hit = checked.get(name);
  if (hit) return hit;
  const tool = TOOLS[name];
  const found = tool.path.startsWith('/')
    ? fs.existsSync(tool.path)
    : spawnSync('sh', ['-c', `command -v ${tool.path}`]).status === 0;
  if (!found)
    throw new Error(
      `${name} is not installed (${tool.path}); install it with: ${tool.install} — or run bash .ci/run, which installs everything`,
    );
  if (tool.version) {
    const r = spawnSync(tool.path, tool.version.args, { encoding: 'utf8', timeout: 60_000 });
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- null when the process could not be started (r.error), whatever the type says
    const said = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
    if (!tool.version.expect.test(said))
      throw new Error(
        `${name} is at ${said || `exit ${r.status}`}, not the pinned version (${tool.version.expect}); install it with: ${tool.install}`,
      );
  }
  checked.set(name, tool.path);
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
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- null when the process could not be started (r.error), whatever the type says
  return { status: r.status ?? -1, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? '') };
}
