#!/usr/bin/env node
// Writes lib/engines/stacks/replacing-properties-table.json: for every resource type of the CloudFormation resource
// specification, the properties whose change replaces the resource (causesReplacement yes or maybe), as
// @aws-cdk/cloudformation-diff's public diff (the engine `cdk diff` and review use) reports them. The roll key reads
// this table instead of loading the specification in every process (about 2 s each: issue 34, the suite's budget).
//
//   node scripts/replacing-properties.js           rewrite the table (after an upgrade of @aws-cdk/cloudformation-diff)
//   node scripts/replacing-properties.js --check   exit 1 if the table differs from the installed specification
//   (--table <file> reads or writes another file than the one the roll key imports)
//
// test/engines/stacks/replacing-properties.test.ts runs --check.
const fs = require('node:fs');
const path = require('node:path');
const { diffTemplate, ResourceImpact } = require('@aws-cdk/cloudformation-diff');

const TABLE = path.join(__dirname, '..', 'lib', 'engines', 'stacks', 'replacing-properties-table.json');
const REGENERATE = 'node scripts/replacing-properties.js';

/** The specification database cloudformation-diff itself reads (its own dependency, so never another version). */
function specification() {
  const diffDir = path.dirname(require.resolve('@aws-cdk/cloudformation-diff/package.json'));
  const spec = ['@aws-cdk', 'aws-service-spec'].join('/');
  return require(require.resolve(spec, { paths: [diffDir] })).loadAwsServiceSpecSync();
}

/** type -> sorted property names whose change the diff reports as a replacement (will or may). */
function table() {
  const db = specification();
  const types = [...new Set(db.all('resource').map((r) => r.cloudFormationType))].sort();
  const out = {};
  for (const type of types) {
    const names = Object.keys(db.lookup('resource', 'cloudFormationType', 'equals', type)[0].properties ?? {});
    if (names.length === 0) continue;
    // Every property changed at once, in a template of one resource, as the roll key used to ask one at a time.
    const one = (value) => ({
      Resources: { R: { Type: type, Properties: Object.fromEntries(names.map((n) => [n, value])) } },
    });
    const updates = diffTemplate(one('a'), one('b')).resources.get('R').propertyUpdates;
    const replacing = names
      .filter((n) => [ResourceImpact.WILL_REPLACE, ResourceImpact.MAY_REPLACE].includes(updates[n]?.changeImpact))
      .sort();
    if (replacing.length > 0) out[type] = replacing;
  }
  return out;
}

/** One type a line, so an upgrade's change reads as a short diff. */
function render(t) {
  const lines = Object.keys(t).map((type) => `  ${JSON.stringify(type)}: ${JSON.stringify(t[type])}`);
  return `{\n${lines.join(',\n')}\n}\n`;
}

function main(argv) {
  const at = argv.indexOf('--table');
  const file = at >= 0 ? path.resolve(argv[at + 1]) : TABLE;
  const text = render(table());
  if (argv.includes('--check')) {
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (current !== text) {
      process.stderr.write(
        `${path.relative(process.cwd(), file)} differs from the installed @aws-cdk/cloudformation-diff's specification: run \`${REGENERATE}\`\n`,
      );
      return 1;
    }
    return 0;
  }
  fs.writeFileSync(file, text);
  process.stdout.write(
    `${path.relative(process.cwd(), file)}: ${Object.keys(JSON.parse(text)).length} resource types\n`,
  );
  return 0;
}

process.exitCode = main(process.argv.slice(2));
