/**
 * How the `worker-stacks` process ends: only after everything it wrote has left the process.
 *
 * process.stdout and process.stderr are asynchronous when they are pipes: a write the reader has not taken yet
 * (more than the pipe's 64 KiB buffer, or a slow reader) waits in the stream, and `process.exit()` drops it.
 * `worker-stacks crd | kubectl apply -f -` then got the first 65,536 bytes. So the exit code is set first, both
 * streams are drained, and only then does the process exit (explicitly: a watch, a socket kept alive or an idle
 * synthesis thread must not keep a finished command running).
 */

/** Resolves once everything written to `stream` so far has been handed to the OS, or the stream can take no more. */
export function drained(
  stream: NodeJS.WritableStream & { writableLength?: number; destroyed?: boolean; writable?: boolean },
): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) {
      resolve();
      return;
    }
    const done = () => {
      stream.off('error', done);
      resolve();
    };
    // A reader that went away (EPIPE) takes nothing more: there is nothing left to wait for.
    stream.once('error', done);
    // Writes complete in order: the callback of an empty write runs after every earlier write has been flushed.
    stream.write('', () => done());
  });
}

/** A process as far as exiting goes (the real one by default; a stand-in in tests). */
export interface ExitingProcess {
  exitCode?: number | string | null;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  exit(code?: number): never | void;
}

/** Sets the exit code, waits until stdout and stderr are written out, then exits with the code. */
export async function exitAfterOutput(code: number, proc: ExitingProcess = process): Promise<void> {
  proc.exitCode = code;
  await Promise.all([drained(proc.stdout), drained(proc.stderr)]);
  proc.exit(code);
}

/**
 * A reader of stdout that stops reading (`worker-stacks status | head -1`) makes the next write fail with EPIPE. That
 * is not an error of the command: it ends quietly with the code it had, instead of printing a stack trace. (stderr is
 * left alone: it is the daemon's log stream, and losing it is an error.)
 */
export function quietOnClosedReader(proc: ExitingProcess = process): void {
  proc.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') proc.exit(typeof proc.exitCode === 'number' ? proc.exitCode : 0);
    else throw e;
  });
}
