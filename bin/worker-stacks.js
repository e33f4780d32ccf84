#!/usr/bin/env node
// npm bin entry: runs the TypeScript CLI through ts-node (transpile only; `npm test` type-checks).
const path = require('node:path');
require('ts-node').register({ transpileOnly: true, project: path.join(__dirname, '..', 'tsconfig.json') });
require('./worker-stacks.ts');
