// The `worker-stacks` CLI: parses arguments in lib/adapters/cli and exits with its code once its output is written out.
import { runCli } from '../lib/adapters/cli/program';
import { processIo } from '../lib/adapters/cli/context';
import { exitAfterOutput, quietOnClosedReader } from '../lib/adapters/cli/exit';
import { WorkerStacksError } from '../lib/core/errors';

quietOnClosedReader();
runCli(process.argv.slice(2)).then(
  (code) => exitAfterOutput(code),
  (e: unknown) => {
    processIo.err(
      e instanceof WorkerStacksError
        ? `error: ${e.message}\n`
        : `internal error: ${e instanceof Error && e.stack ? e.stack : String(e)}\n`,
    );
    return exitAfterOutput(2);
  },
);
