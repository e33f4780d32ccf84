import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Problem } from '../../core/errors';
import { LoadedCluster } from '../../model/cluster/load';
import { buildFleetApp } from '../stacks/app';
import { captureOutput, isPolicyReport } from './synth-findings';
import { synthesisProblems } from './synthesis-check';

/**
 * The CDK app's synthesis (`cdk synth`, `cdk deploy`, `cdk diff`: bin/app.ts), all or nothing. aws-cdk-lib writes the
 * whole cloud assembly and only then reports cdk-nag's refusal, naming construct paths: the CLI then found a fresh
 * assembly of a fleet it had refused. Here the app synthesizes into a scratch directory; only a clean synthesis is
 * copied into the outdir, and a refusal is traced back to each object's file and field by the same code as
 * `worker-stacks validate` (synthesis-check.ts), which runs only then: a clean synthesis costs nothing more.
 */
export interface FleetSynthesis {
  /** Empty when the assembly is in the outdir. */
  readonly problems: readonly Problem[];
  /** What aws-cdk-lib printed (warnings), to be shown. */
  readonly output: readonly string[];
}

export function synthesizeFleet(props: {
  readonly clusters: readonly LoadedCluster[];
  readonly templatesDir: string;
  readonly nag: boolean;
  /** @default CDK_OUTDIR from the CDK CLI, else a new temp dir */
  readonly outdir?: string;
}): FleetSynthesis {
  const outdir = props.outdir ?? process.env.CDK_OUTDIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'cdk.out-'));
  // Beside the outdir, on its file system: a clean synthesis is moved in entry by entry (renames), not copied.
  fs.mkdirSync(path.dirname(path.resolve(outdir)), { recursive: true });
  const scratch = fs.mkdtempSync(path.join(path.dirname(path.resolve(outdir)), '.ws-synth-'));
  try {
    const run = captureOutput(() => buildFleetApp({ ...props, outdir: scratch }).app.synth());
    if (run.error === undefined && !isPolicyReport(undefined, run.output)) {
      fs.mkdirSync(outdir, { recursive: true });
      for (const entry of fs.readdirSync(scratch)) {
        const target = path.join(outdir, entry);
        fs.rmSync(target, { recursive: true, force: true });
        fs.renameSync(path.join(scratch, entry), target);
      }
      return { problems: [], output: run.output };
    }
    const traced =
      props.nag && isPolicyReport(run.error, run.output)
        ? props.clusters.flatMap((c) =>
            synthesisProblems(c.cluster, c.file, { templatesDir: props.templatesDir, nag: true }),
          )
        : [];
    const message = run.error instanceof Error ? run.error.message.split('\n')[0] : 'the app did not synthesize';
    return {
      problems: traced.length ? traced : [{ file: '', path: '', message: `${message} (${run.output.join('; ')})` }],
      output: run.output,
    };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
