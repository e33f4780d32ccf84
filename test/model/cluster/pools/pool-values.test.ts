import { validateCluster } from '../../../../lib/model/cluster/validate';
import { renderConfig } from '../../../../lib/model/cloudconfig/render';
import { TEMPLATES } from '../../../helpers/clusters';
import { Json } from '../../../helpers/json';
import { rawPoolsExample } from '../../../helpers/named-pools';
import { defaultTemplates } from '../../../../lib/platform/files/template-directory';

/**
 * Issue 32 item 8: a template value is required only by the template that uses it. prod-eu1 is a Flatcar cluster
 * (flatcar-worker requires awsCliImage, which al2023-worker does not take); before, a pool under al2023-worker was
 * held to the cluster's awsCliImage ("unknown value"), and the cluster to Flatcar's required values when no pool ran
 * Flatcar at all.
 */

const validate = (raw: Json) => validateCluster(raw, { file: 'clusters/prod-eu1.yaml', templates: TEMPLATES });
const problems = (raw: Json) => validate(raw).problems.map((p) => `${p.path}: ${p.message}`);

test.each([
  {
    what: 'one AL2023 pool in a Flatcar cluster',
    mutate: (o: Json) => (o.spec.pools[2].cloudConfig.template = 'al2023-worker'),
  },
  {
    what: "every pool on AL2023, the cluster's template's required value left out",
    mutate: (o: Json) => {
      for (const p of o.spec.pools) p.cloudConfig = { ...p.cloudConfig, template: 'al2023-worker' };
      delete o.spec.cloudConfig.values.awsCliImage;
    },
  },
])('$what is valid, and each pool renders under its own template', ({ mutate }) => {
  // GIVEN the named-pools prod-eu1, changed so; WHEN validated
  const raw = rawPoolsExample();
  mutate(raw);
  const r = validate(raw);
  // THEN no problem
  expect(r.problems).toEqual([]);
  // AND each AL2023 pool's node config is AL2023's (nodeadm's NodeConfig, no AWS CLI container)
  for (const p of raw.spec.pools.filter((x: Json) => x.cloudConfig?.template === 'al2023-worker')) {
    const text = renderConfig(r.cluster!, defaultTemplates(), p.name).bytes.toString('utf8');
    expect(text).not.toContain(raw.spec.cloudConfig.values.awsCliImage ?? 'aws-cli@sha256');
  }
});

test.each([
  {
    what: 'a Flatcar-only value the AL2023 pool sets itself',
    mutate: (o: Json) => {
      o.spec.pools[2].cloudConfig.template = 'al2023-worker';
      o.spec.pools[2].cloudConfig.values.awsCliImage = o.spec.cloudConfig.values.awsCliImage;
    },
    expected: [
      /^spec\.pools\[2\]\.cloudConfig\.values\.awsCliImage: unknown value: template al2023-worker does not declare it/,
    ],
  },
  {
    what: "the cluster's template's required value, while one pool still runs it",
    mutate: (o: Json) => {
      o.spec.pools[2].cloudConfig.template = 'al2023-worker';
      delete o.spec.cloudConfig.values.awsCliImage;
    },
    expected: [/^spec\.cloudConfig\.values\.awsCliImage: required field is missing \(template flatcar-worker needs it/],
  },
  {
    what: "a value neither the cluster's template nor any pool's takes",
    mutate: (o: Json) => {
      o.spec.pools[2].cloudConfig.template = 'al2023-worker';
      o.spec.cloudConfig.values.fooBar = 'x';
    },
    expected: [/^spec\.cloudConfig\.values\.fooBar: unknown value: template flatcar-worker does not declare it/],
  },
])('$what is still refused', ({ mutate, expected }) => {
  // GIVEN the named-pools prod-eu1, changed so; WHEN validated
  const raw = rawPoolsExample();
  mutate(raw);
  // THEN exactly these problems
  expect(problems(raw)).toEqual(expected.map((e) => expect.stringMatching(e)));
});
