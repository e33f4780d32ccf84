// One moto server of each kind (plain moto, the project's wrapper tools/moto/server.py) per jest worker, shared by
// the test files that worker runs one after another. Starting a server and the lazy load of the CloudFormation, EC2
// and S3 backends on its first requests cost ~2-2.5 s of Python CPU; a reset costs a fraction of it.
//
// This module is required by the test environment (measured-node.js) with Node's own require, once per worker: its
// state outside jest's module registry (reset for each file) is what lets the next file find the server. The test
// side (test/helpers/moto.ts) reaches it through the environment's global `__wsSharedMoto`. Everything that
// outlives a file (the child process, its listeners, timers) is made here, so that no closure of a finished file's
// module registry stays reachable.
//
// Each acquisition resets the server (POST /moto-api/reset: every backend, and the wrapper's own state: change sets
// still to settle) and, for the wrapper, sets the file's in-progress seconds; a file holds a kind until it stops it
// (stop() releases, it does not kill). The servers are killed when the worker exits.
const http = require('node:http');
const net = require('node:net');
const { spawn } = require('node:child_process');

/** kind -> { child, port, endpoint } */
const servers = new Map();
/** kind -> the test file that holds the server (set before the first await: two acquisitions at once are refused). */
const holders = new Map();

function request(method, url, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      {
        method,
        agent: false, // no kept-alive socket holding the worker open
        timeout: 10_000,
        headers:
          data === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    req.end(data);
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const alive = (child) => child.exitCode === null && child.signalCode === null;

async function answers(endpoint, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && alive(child)) {
    try {
      if ((await request('GET', `${endpoint}/moto-api/`)).status === 200) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return false;
}

/** Starts `command` (moto.ts's, without host and port) on a free port; the port can be taken before the bind: a few tries. */
async function start(command, timeoutMs) {
  let lastError = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn(command[0], [...command.slice(1), '-H', '127.0.0.1', '-p', String(port)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr = (stderr + String(d)).slice(-4000)));
    child.on('error', (e) => (stderr += String(e)));
    // Neither the process nor its pipe keeps the worker alive: jest ends an idle worker, and 'exit' below kills it.
    child.unref();
    child.stderr.unref();
    const endpoint = `http://127.0.0.1:${port}`;
    if (await answers(endpoint, child, timeoutMs)) return { child, port, endpoint, holder: undefined };
    child.kill('SIGKILL');
    lastError = stderr.trim();
  }
  throw new Error(
    `the shared moto server (${command.join(' ')}) did not answer on /moto-api/: ${lastError || 'no output'}`,
  );
}

async function expectOk(method, url, body) {
  const r = await request(method, url, body);
  if (r.status !== 200) throw new Error(`${method} ${url}: HTTP ${r.status} ${r.text}`);
}

/** Whether the worker has a live server of this kind (moto.ts checks moto's version only before the first). */
function running(kind) {
  const s = servers.get(kind);
  return s !== undefined && alive(s.child);
}

/**
 * The worker's server of `spec.kind` for `holder` (a test file), reset as if just started; for the wrapper with
 * `spec.inProgressSeconds`. A file holds one server of each kind at a time: asking for a second one before stop() is
 * refused (a file that needs two at once starts its own). A holder that never gave it back (an earlier file) loses it.
 */
async function acquire(spec, holder) {
  const { kind, timeoutMs } = spec;
  const command = [...spec.command];
  const inProgressSeconds = spec.inProgressSeconds;
  if (holders.get(kind) === holder)
    throw new Error(`this file holds the shared ${kind} server already: stop() it first, or start its own server`);
  holders.set(kind, holder);
  let s = servers.get(kind);
  try {
    if (s === undefined || !alive(s.child)) {
      servers.delete(kind);
      s = await start(command, timeoutMs);
      servers.set(kind, s);
      watchExit();
    }
    await expectOk('POST', `${s.endpoint}/moto-api/reset`);
    if (inProgressSeconds !== undefined)
      await expectOk('POST', `${s.endpoint}/moto-api/worker-stacks/settings`, { inProgressSeconds });
  } catch (e) {
    release(kind, holder);
    // A server that cannot be reset is not handed out again: the next file starts a new one.
    if (s !== undefined && servers.get(kind) === s) {
      servers.delete(kind);
      s.child.kill('SIGKILL');
    }
    throw e;
  }
  return { port: s.port, endpoint: s.endpoint, pid: s.child.pid };
}

/** Ends `holder`'s use of the server: it stays up for the next file, which resets it. */
function release(kind, holder) {
  if (holders.get(kind) === holder) holders.delete(kind);
}

/** Ends every use of `holder` (the environment's teardown: a file that failed before its stop()). */
function releaseAll(holder) {
  for (const kind of [...holders.keys()]) release(kind, holder);
}

function killAll() {
  for (const s of servers.values()) if (alive(s.child)) s.child.kill('SIGKILL');
  servers.clear();
}

// The worker leaves: no server outlives it. jest ends an idle worker by letting its event loop run empty: the servers
// are killed then and waited for, so that they are reaped by the worker and their CPU time counts in its children's
// (and in the whole run's, as /usr/bin/time prints it), as a file's own server's does. 'exit' handlers run
// synchronously: on process.exit() it is SIGKILL at once, not waited for; on SIGTERM (jest's forced end of a worker)
// the servers go, then the signal does its job.
// (Registered with the first server only: jest's main process loads this module too, and starts none.)
let watching = false;
function watchExit() {
  if (watching) return;
  watching = true;
  process.on('beforeExit', () => {
    const live = [...servers.values()].filter((s) => alive(s.child));
    servers.clear();
    if (live.length === 0) return;
    for (const s of live) {
      s.child.ref(); // the loop waits for its exit
      s.child.kill('SIGKILL');
    }
    // ...but not for long: jest force-ends (SIGTERM) a worker still there 500 ms after it told it to end. Reaping
    // took ~75 ms here; on a loaded machine the worker leaves after 200 ms, the killed servers to init to reap.
    const cap = setTimeout(() => live.forEach((s) => s.child.unref()), 200);
    const exited = live.map((s) => new Promise((r) => (alive(s.child) ? s.child.once('exit', r) : r())));
    void Promise.all(exited).then(() => clearTimeout(cap));
  });
  process.on('exit', killAll);
  process.once('SIGTERM', () => {
    killAll();
    process.kill(process.pid, 'SIGTERM');
  });
}

module.exports = { acquire, release, releaseAll, running };
