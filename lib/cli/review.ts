import { Command } from 'commander';
import { Io } from './context';

/** `worker-stacks review` (issue: review). Placeholder registration until the command lands. */
export function registerReview(program: Command, io: Io, done: (code: number) => void): void {
  void program;
  void io;
  void done;
}
