import * as fs from 'node:fs';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { BootstrapStack } from '../../../lib/engines/stacks/bootstrap-stack';
import { example, EXAMPLE_NAMES, ownSecret, tempDir, variant } from '../../helpers/clusters';
import { synthCluster } from '../../helpers/synth';
import { dropRulesOfMissingPools, poolsVariant, synthAll } from './pool-helpers';
import { requireTool, run } from '../../helpers/tools';

/**
 * Warnings that may remain, each with its justification. Anything else
 * (and every error) fails the test.
 */
const JUSTIFIED_WARNINGS: Record<string, string> = {
  W3697:
    'AWS::AutoScaling::LaunchConfiguration is in maintenance mode; it is built only for clusters that opt in with spec.pool.legacyLaunchConfiguration (edge-ap1 does, on purpose).',
};

interface Finding {
  Rule: { Id: string };
  Level: string;
  Message: string;
  Filename: string;
}

function lint(files: string[]): Finding[] {
  const r = run(requireTool('cfn-lint'), ['--format', 'json', ...files]);
  if (r.stdout.trim() === '') throw new Error(`cfn-lint printed nothing (exit ${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** The examples and variants that reach every branch (all protocols, sources, schemes, single type), as template files. */
function synthesizedTemplates(): string[] {
  const clusters = [
    ...EXAMPLE_NAMES.map(example),
    variant('prod-eu1', (raw) => {
      raw.metadata.name = 'variant-a';
      ownSecret(raw);
      raw.spec.pool.instanceTypes = ['m6i.large'];
      raw.spec.loadBalancer = { scheme: 'internet-facing', allowedCidrs: ['0.0.0.0/0', '192.0.2.0/24'] };
      raw.spec.listeners.push({ name: 'dns', protocol: 'TCP_UDP', port: 53, nodePort: 30053 });
      raw.spec.securityGroupRules.push({ description: 'icmpv6', protocol: 'icmpv6', source: { cidrIpv6: '::/0' } });
      raw.spec.securityGroupRules.push({
        description: 'from lb',
        protocol: 'udp',
        fromPort: 30000,
        toPort: 30100,
        source: { loadBalancer: true },
      });
    }),
    // instance refresh with every preference, no drain (the branches the examples do not reach)
    variant('prod-eu1', (raw) => {
      raw.metadata.name = 'variant-refresh';
      ownSecret(raw);
      const ru = raw.spec.pool.rollingUpdate;
      delete ru.maxBatchSize;
      delete ru.minInstancesInService;
      ru.strategy = 'instanceRefresh';
      ru.instanceRefresh = {
        minHealthyPercentage: 90,
        maxHealthyPercentage: 150,
        instanceWarmupSeconds: 120,
        checkpoints: [25, 100],
        checkpointDelaySeconds: 600,
        bakeTimeSeconds: 900,
        alarms: ['nodes-not-ready'],
      };
      raw.spec.pool.drain = { enabled: false };
    }),
  ];
  const dir = tempDir('lint');
  const files = clusters.map((c) => {
    const file = path.join(dir, `${c.metadata.name}.template.json`);
    fs.writeFileSync(file, synthCluster(c).text);
    return file;
  });
  // the three-pool fixture: its shared stack (with exports) and each pool's own stack; and without its pool default
  const noDefault = poolsVariant((raw) => {
    raw.metadata.name = 'pools-nodefault';
    ownSecret(raw);
    raw.spec.pools = raw.spec.pools.slice(1);
    dropRulesOfMissingPools(raw);
  });
  for (const [name, text] of [...synthAll(poolsVariant()), ...synthAll(noDefault)]) {
    const file = path.join(dir, `${name}.template.json`);
    fs.writeFileSync(file, text);
    files.push(file);
  }
  // and the bootstrap stack in both modes: alone, and with a deployer role (the execution role, the bucket's write policy)
  for (const trust of [
    undefined,
    { principals: ['arn:aws:iam::999999999999:role/worker-stacks-daemon'], externalId: 'fleet' },
  ]) {
    const app = new App({ outdir: tempDir('lint-bootstrap') });
    const stack = new BootstrapStack(app, { account: '444444444444', region: 'eu-west-1', trust });
    const file = path.join(dir, `bootstrap-${trust ? 'trust' : 'alone'}.template.json`);
    fs.writeFileSync(file, JSON.stringify(Template.fromStack(stack).toJSON()));
    files.push(file);
  }
  return files;
}

/** A synthesized template with an ASG whose MinSize is not a number: cfn-lint must report an error. */
function brokenTemplate(): string {
  const dir = tempDir('lint-bad');
  const good = synthCluster(example('staging-us1')).json;
  const group = Object.keys(good.Resources).find(
    (k) => good.Resources[k].Type === 'AWS::AutoScaling::AutoScalingGroup',
  )!;
  good.Resources[group].Properties.MinSize = 'many';
  const file = path.join(dir, 'broken.template.json');
  fs.writeFileSync(file, JSON.stringify(good));
  return file;
}

// One cfn-lint run lints every template and the broken one (a start of cfn-lint costs seconds of CPU); each test
// reads its own files' findings.
let files: string[];
let broken: string;
let all: Finding[];
beforeAll(() => {
  files = synthesizedTemplates();
  broken = brokenTemplate();
  all = lint([...files, broken]);
}, 300_000);
const isBroken = (f: Finding) => path.basename(f.Filename) === path.basename(broken);

test('every synthesized template passes cfn-lint with no error and only justified warnings', () => {
  // GIVEN the examples' templates WHEN linted (beforeAll)
  const findings = all.filter((f) => !isBroken(f));

  // THEN
  const unjustified = findings.filter((f) => f.Level === 'Error' || !(f.Rule.Id in JUSTIFIED_WARNINGS));
  expect(unjustified.map((f) => `${path.basename(f.Filename)}: ${f.Rule.Id} ${f.Message}`)).toEqual([]);
  // The legacy warning appears exactly where it is justified.
  expect(findings.filter((f) => f.Rule.Id === 'W3697').map((f) => path.basename(f.Filename))).toEqual([
    'edge-ap1.template.json',
  ]);
});

test('cfn-lint is live: a broken template is reported as an error', () => {
  // GIVEN a template whose group's MinSize is not a number WHEN linted beside the others (beforeAll)
  const findings = all.filter(isBroken);

  // THEN
  expect(findings.some((f) => f.Level === 'Error')).toBe(true);
});
