// jest's node environment, plus the CPU time each test file costs: this process's and that of the child processes it
// started and reaped (its own moto, kube-apiserver, the CLI), from /proc/self/stat. The slowest-suites reporter prints
// it beside wall time, so that a file that mostly waits (a lease to expire, a stack in progress) is told apart from one
// that computes: only the second costs the 2-core budget when files run side by side (docs/testing.md).
//
// It also hands the test files the worker's shared moto servers (shared-moto.js, global `__wsSharedMoto`, used by
// test/helpers/moto.ts). Their CPU is no file's: the servers are reaped when the worker exits, after its last file, so
// a file's figure leaves out the requests it made of a shared server (the whole run's user+sys, as /usr/bin/time
// prints it, counts them).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { TestEnvironment } = require('jest-environment-node');
const sharedMoto = require('./shared-moto');

/** CPU seconds of this process and its reaped children, or undefined where there is no /proc (macOS). */
function cpuSeconds() {
  let stat;
  try {
    stat = fs.readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command (which may hold spaces) start at state, field 3; utime..cstime are fields 14-17.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = [11, 12, 13, 14].reduce((n, i) => n + Number(f[i]), 0);
  return ticks / 100; // USER_HZ is 100 on Linux
}

/** Where the files of one jest run write their CPU time: the reporter (in jest's main process) reads it. */
function cpuLogOf(mainPid) {
  return path.join(os.tmpdir(), `worker-stacks-jest-cpu-${mainPid}.jsonl`);
}

class MeasuredNodeEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    const holder = this.testPath;
    this.global.__wsSharedMoto = {
      running: (kind) => sharedMoto.running(kind),
      acquire: (spec) => sharedMoto.acquire(spec, holder),
      release: (kind) => sharedMoto.release(kind, holder),
    };
  }

  async setup() {
    this.cpuAtStart = cpuSeconds();
    await super.setup();
  }

  // After every afterAll of the file: the servers it stopped are reaped by now and their CPU counted.
  async teardown() {
    sharedMoto.releaseAll(this.testPath);
    await super.teardown();
    const end = cpuSeconds();
    if (this.cpuAtStart === undefined || end === undefined) return;
    // A worker (forked, with an IPC channel) has jest's main process for parent; a run in band is that process.
    const mainPid = typeof process.send === 'function' ? process.ppid : process.pid;
    fs.appendFileSync(cpuLogOf(mainPid), `${JSON.stringify({ file: this.testPath, cpu: end - this.cpuAtStart })}\n`);
  }
}

module.exports = MeasuredNodeEnvironment;
module.exports.cpuLogOf = cpuLogOf;
