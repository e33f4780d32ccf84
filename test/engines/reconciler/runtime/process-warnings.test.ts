import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { routeProcessWarnings } from '../../../../lib/engines/reconciler/runtime/process-warnings';
import { RecordingLogger } from '../../../fakes/fake-ports';

const BIN = path.resolve(__dirname, '..', '..', '..', '..', 'bin', 'worker-stacks.js');

test('process warnings become one warn line each, and the printer that was there comes back after', () => {
  // GIVEN a process with a warning printer (Node's own, in a real process), and its warnings routed to a logger
  const proc = new EventEmitter() as unknown as NodeJS.Process;
  const printed: Error[] = [];
  const printer = (w: Error) => printed.push(w);
  proc.on('warning', printer);
  const log = new RecordingLogger();
  const restore = routeProcessWarnings(log, proc);

  // WHEN a multi-line warning is emitted (as the AWS SDK's notice on Node 20 is)
  proc.emit(
    'warning',
    Object.assign(new Error('first line\nsecond line\n\nthird'), { name: 'TestWarning', code: 'WS_TEST' }),
  );
  restore();
  proc.emit('warning', new Error('after'));

  // THEN it became one warn entry with its lines joined, and was not printed; after restore the printer has it again
  expect(log.entries).toEqual([
    expect.objectContaining({
      level: 'warn',
      msg: 'first line second line third',
      obj: { warning: 'TestWarning', code: 'WS_TEST' },
    }),
  ]);
  expect(printed.map((w) => w.message)).toEqual(['after']);
  expect(proc.listeners('warning')).toEqual([printer]);
});

test('reconcile writes nothing but JSON lines to its log stream, the SDK’s Node-version notice included', () => {
  // GIVEN an empty directory of cluster objects (the AWS clients are still built) and dummy credentials
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-warnings-'));
  try {
    // WHEN one pass runs
    const run = spawnSync(process.execPath, [BIN, 'reconcile', '--once', '--clusters', dir], {
      encoding: 'utf8',
      env: {
        ...process.env,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'x',
        AWS_SECRET_ACCESS_KEY: 'y',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: '',
      },
    });

    // THEN every line of stderr (the log) parses as JSON
    expect(run.status).toBe(0);
    const lines = run.stderr.split('\n').filter((l) => l.trim() !== '');
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    // AND on a Node the SDK warns about (< 22), its notice is one of those JSON lines
    const sdkWarns = Number(process.versions.node.split('.')[0]) < 22;
    expect(lines.some((l) => /NodeVersionSupportWarning/.test(l))).toBe(sdkWarns);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
