#!/usr/bin/env node
// After `tsc -p tsconfig.build.json`: writes build/code-version.json, the version of the template code that was
// just compiled (see lib/engines/reconciler/workflow/code-version.ts). Compiled code reads it instead of the sources.
const path = require('node:path');
const root = path.join(__dirname, '..');
const v = require(path.join(root, 'build', 'lib', 'engines', 'reconciler', 'workflow', 'code-version.js')).writeStamp(
  path.join(root, 'build'),
  root,
);
console.log(`build/code-version.json: worker-stacks ${v.version}, template code ${v.templateCode.slice(0, 12)}`);
