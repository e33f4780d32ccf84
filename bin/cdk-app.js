#!/usr/bin/env node
// cdk.json's app: the CDK app of bin/app.ts, precompiled when the build is current (see launch.js).
require('./launch').run('app');
