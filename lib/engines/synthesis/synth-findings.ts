import { SGR_SOURCE } from '../../core/ansi';
import { synthesisProblems } from './synthesis-check';
import { WorkerCluster } from '../../model/cluster/schema/schema';
import { SynthesisError } from '../../core/errors';

/**
 * What a failed synthesis says, as data. aws-cdk-lib prints its policy-validation report (cdk-nag's `ERROR ...
 * AwsSolutions-EC23 ... Acknowledge with ...` blocks) with console.error unless the app runs "in memory", and throws
 * "Validation failed" with a pointer to a report file in the assembly. In the daemon that text went to stderr, the
 * JSON log stream, and the recorded message was empty. Here the output is captured and the findings are traced
 * back to the object's fields, with the fix, by the same code as `worker-stacks validate`.
 */

/** One cdk-nag finding, traced back to the object. */
export interface SynthesisFinding {
  /** The cdk-nag rule (`AwsSolutions-EC23`). */
  readonly rule: string;
  /** The field path of the object that produced the resource (`spec.securityGroupRules[4]`), or '' when unknown. */
  readonly path: string;
  /** What the rule says is wrong, with the construct path(s) of the resource(s). */
  readonly message: string;
  /** How to change the object so that the finding goes. */
  readonly fix: string;
}

/** A stack that cdk-nag refused, with its findings as data (the message holds the same, as text). */
export class SynthesisFindingsError extends SynthesisError {
  public readonly findings: readonly SynthesisFinding[];

  constructor(message: string, options: { cause?: unknown; hint?: string; findings: readonly SynthesisFinding[] }) {
    super(message, options);
    this.findings = options.findings;
  }
}

/** What a call wrote to the console, stdout or stderr, captured instead of printed, line by line (colours removed). */
export interface Captured<T> {
  readonly result?: T;
  readonly error?: unknown;
  readonly output: readonly string[];
}

/**
 * Runs a synchronous `fn` with the console, process.stdout and process.stderr captured, aws-cdk-lib in its in-memory
 * mode (the report goes into the exception, not to the console), and process.exitCode kept (aws-cdk-lib sets it to 1
 * after a report it does not throw). Safe because nothing else runs in this thread while `fn` runs.
 */
export function captureOutput<T>(fn: () => T): Captured<T> {
  const output: string[] = [];
  const take = (...args: unknown[]) => {
    const text = args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? a.message : String(a))).join(' ');
    output.push(
      ...text
        .replace(new RegExp(SGR_SOURCE, 'g'), '')
        .split('\n')
        .map((l) => l.trimEnd())
        .filter((l) => l !== ''),
    );
  };
  const methods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
  // The methods are kept to be put back as they were (a bound copy would not be the same function), never called detached.
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as is below
  const consoleBefore = methods.map((m) => console[m]);
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as is below
  const writes = [process.stdout, process.stderr].map((s) => ({ s, write: s.write }));
  const exitCode = process.exitCode;
  const appMode = process.env.CDK_APP_MODE;
  for (const m of methods) console[m] = take;
  for (const { s } of writes) {
    s.write = (chunk: unknown, ...rest: unknown[]) => {
      take(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      const cb = rest.find((r): r is () => void => typeof r === 'function');
      cb?.();
      return true;
    };
  }
  process.env.CDK_APP_MODE = 'inmemory';
  try {
    return { result: fn(), output };
  } catch (error) {
    return { error, output };
  } finally {
    methods.forEach((m, i) => (console[m] = consoleBefore[i]));
    for (const { s, write } of writes) s.write = write;
    process.exitCode = exitCode;
    if (appMode === undefined) delete process.env.CDK_APP_MODE;
    else process.env.CDK_APP_MODE = appMode;
  }
}

/** Whether a failure is aws-cdk-lib's policy-validation report (cdk-nag), from its error and what it printed. */
export function isPolicyReport(error: unknown, output: readonly string[]): boolean {
  const text = `${error instanceof Error ? error.message : ''}\n${output.join('\n')}`;
  return /Acknowledge with|Validation failed|Validation Report/i.test(text);
}

/**
 * The cdk-nag findings of a cluster, each traced to the field that caused it and its fix: the same words as
 * `worker-stacks validate` (lib/engines/synthesis/synthesis-check.ts), which synthesizes the object once more to find them.
 */
export function nagFindings(cluster: WorkerCluster, file: string, templatesDir: string): SynthesisFinding[] {
  const { result } = captureOutput(() => synthesisProblems(cluster, file, { templatesDir, nag: true }));
  return (result ?? []).map((p) => {
    const m = /^cdk-nag (\S+): ([\s\S]*?); fix: ([\s\S]*)$/.exec(p.message);
    return m
      ? { rule: m[1], path: p.path, message: m[2], fix: m[3] }
      : { rule: '', path: p.path, message: p.message, fix: '' };
  });
}

/** `spec.securityGroupRules[4]: cdk-nag AwsSolutions-EC23: ... (resource ...); fix: ...`, one line per finding. */
export function formatFindings(findings: readonly SynthesisFinding[]): string {
  return findings
    .map(
      (f) =>
        `${f.path || '(the object)'}: ${f.rule ? `cdk-nag ${f.rule}: ` : ''}${f.message}${f.fix ? `; fix: ${f.fix}` : ''}`,
    )
    .join('\n');
}
