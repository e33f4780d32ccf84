import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { kubeBinDir } from '../helpers/kube-apiserver';
import { REPO } from '../helpers/clusters';
import { Json as AnyJson } from '../helpers/json';

/**
 * The Go tools the chart, alert and kubectl tests run for real, built from the Go module proxy by
 * scripts/kube/build-{kubectl,helm,promtool}.sh (run by .ci/install-tools) into ~/.cache/worker-stacks. Always by
 * absolute path: /usr/bin/kubectl on a machine may be another program. A missing binary fails the test with the
 * command that builds it; it never skips.
 */
const CACHE = process.env.WORKER_STACKS_TOOLS_CACHE ?? path.join(os.homedir(), '.cache', 'worker-stacks');
export const GO_TOOLS = {
  kubectl: { path: path.join(kubeBinDir(), 'kubectl'), build: 'bash scripts/kube/build-kubectl.sh' },
  helm: { path: path.join(CACHE, 'helm', 'v3.22.0', 'bin', 'helm'), build: 'bash scripts/kube/build-helm.sh' },
  promtool: {
    path: path.join(CACHE, 'prometheus', 'v0.316.0', 'bin', 'promtool'),
    build: 'bash scripts/kube/build-promtool.sh',
  },
} as const;

export const CHART = path.join(REPO, 'charts', 'worker-stacks');

export function goTool(name: keyof typeof GO_TOOLS): string {
  const t = GO_TOOLS[name];
  if (!fs.existsSync(t.path))
    throw new Error(
      `${name} is not built (${t.path} is missing); run ${t.build} (or bash .ci/install-tools) — it needs Go and the Go module proxy`,
    );
  return t.path;
}

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a tool and returns its exit code and output (never throws on a non-zero exit). */
export function run(
  file: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {},
): Run {
  const r = spawnSync(file, args, {
    cwd: opts.cwd ?? REPO,
    env: { ...process.env, ...opts.env },
    input: opts.input,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Like run, but a non-zero exit fails with the command and its output. */
export function runOk(
  file: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {},
): string {
  const r = run(file, args, opts);
  if (r.code !== 0)
    throw new Error(
      `${path.basename(file)} ${args.join(' ')} exited ${r.code}:\n${r.stderr}\n${r.stdout.slice(0, 4000)}`,
    );
  return r.stdout;
}

/** A parsed manifest object: its fields are read freely (../helpers/json.ts). */
export type Json = Record<string, AnyJson>;

/** Every non-empty YAML document of a stream, parsed. */
export function docs(yamlText: string): Json[] {
  return parseAllDocuments(yamlText)
    .map((d) => {
      if (d.errors.length) throw new Error(`bad YAML: ${d.errors[0].message}`);
      return d.toJS() as Json | null;
    })
    .filter((d): d is Json => d !== null && typeof d === 'object');
}

/** kind/namespace/name of an object: how two renderings are matched. */
export const keyOf = (o: Json) => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;

/** `helm template` of the chart with these extra arguments (values files, --set ...), parsed. */
export function helmTemplate(args: readonly string[] = []): Json[] {
  return docs(runOk(goTool('helm'), ['template', 'worker-stacks', CHART, ...args]));
}
