#!/usr/bin/env node
// npm bin entry: the CLI of bin/worker-stacks.ts, precompiled when the build is current (see launch.js).
require('./launch').run('worker-stacks');
