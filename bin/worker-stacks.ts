// The `worker-stacks` CLI: parses arguments in lib/cli and exits with its code.
import { runCli } from '../lib/cli/program';
import { WorkerStacksError } from '../lib/errors';

runCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(e instanceof WorkerStacksError ? `error: ${e.message}\n` : `internal error: ${(e as Error).stack ?? e}\n`);
    process.exit(2);
  },
);
