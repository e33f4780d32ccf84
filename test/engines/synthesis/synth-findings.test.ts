import { SynthesisError, TemplateError } from '../../../lib/core/errors';
import { captureOutput, SynthesisFindingsError } from '../../../lib/engines/synthesis/synth-findings';
import { rebuild } from '../../../lib/engines/synthesis/synth-pool';

/** The pieces that keep synthesis quiet and its failures as data (end to end: test/adapters/cli/reconcile-nag.test.ts). */

test('captureOutput takes what a call prints, and puts the console, the streams, the exit code and the app mode back', () => {
  // GIVEN the process as it is
  // Compared by identity: captureOutput must put back the very same functions.
  const before = {
    error: console.error,
    // eslint-disable-next-line @typescript-eslint/unbound-method -- compared, never called
    write: process.stderr.write,
    exitCode: process.exitCode,
    mode: process.env.CDK_APP_MODE,
  };

  // WHEN a call prints to the console and to stderr, sets the exit code, and looks at the app mode
  let mode: string | undefined;
  const run = captureOutput(() => {
    console.error('\x1b[31mERROR\x1b[0m The Security Group allows for 0.0.0.0/0\n   Acknowledge with ...');
    process.stderr.write('a line on stderr\n');
    process.exitCode = 1;
    mode = process.env.CDK_APP_MODE;
    throw new Error('Validation failed');
  });

  // THEN the output is captured as lines without colour, the error is returned, aws-cdk-lib ran in memory
  expect(run.output).toEqual([
    'ERROR The Security Group allows for 0.0.0.0/0',
    '   Acknowledge with ...',
    'a line on stderr',
  ]);
  expect((run.error as Error).message).toBe('Validation failed');
  expect(mode).toBe('inmemory');
  // AND everything is as it was
  expect({
    error: console.error,
    // eslint-disable-next-line @typescript-eslint/unbound-method -- compared, never called
    write: process.stderr.write,
    exitCode: process.exitCode,
    mode: process.env.CDK_APP_MODE,
  }).toEqual(before);
});

test.each<{ error: Error; Class: new (message: string) => Error }>([
  {
    error: new SynthesisFindingsError('x: did not synthesize', {
      hint: 'narrow it',
      findings: [{ rule: 'AwsSolutions-EC23', path: 'spec.securityGroupRules[4]', message: 'open', fix: 'narrow it' }],
    }),
    Class: SynthesisFindingsError,
  },
  { error: new SynthesisError('y: did not synthesize', { hint: 'run cdk synth' }), Class: SynthesisError },
  { error: new TemplateError('z: does not render'), Class: TemplateError },
])(
  'an error that crosses the synthesis thread keeps its class, message, hint and findings: $error.name',
  ({ error, Class }) => {
    // WHEN it is sent as data (synth-worker.ts) and rebuilt (synth-pool.ts)
    const e = error as Error & { hint?: string; findings?: unknown };
    const back = rebuild(
      JSON.parse(JSON.stringify({ name: e.name, message: e.message, hint: e.hint, findings: e.findings })),
    ) as typeof e;

    // THEN it is the same error
    expect(back).toBeInstanceOf(Class);
    expect({ name: back.name, message: back.message, hint: back.hint, findings: back.findings }).toEqual({
      name: e.name,
      message: e.message,
      hint: e.hint,
      findings: e.findings,
    });
  },
);
