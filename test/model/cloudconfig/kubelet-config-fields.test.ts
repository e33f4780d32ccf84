/**
 * The kubelet field table the strict NodeConfig check reads is k8s.io/kubelet's own KubeletConfiguration, by its
 * generator (scripts/generate-kubelet-config-fields.js reads config/v1beta1/types.go from the Go module cache, where
 * scripts/kube/build-nodeadm.sh puts it): a hand edit, or a kind typed other than its Go type, fails here.
 */
import * as path from 'node:path';
import { KUBELET_CONFIG_FIELDS } from '../../../lib/model/cloudconfig/kubelet-config-fields';
import { REPO } from '../../helpers/clusters';
import { run } from '../../helpers/tools';

describe("KUBELET_CONFIG_FIELDS is the generator's output", () => {
  test('the committed table equals the one generated from types.go', () => {
    // WHEN
    const r = run('node', [path.join(REPO, 'scripts', 'generate-kubelet-config-fields.js'), '--json']);
    // THEN
    expect(r.stderr).toBe('');
    expect(KUBELET_CONFIG_FIELDS).toEqual(JSON.parse(r.stdout));
  });

  test.each([
    ['evictionHard', 'string-map'],
    ['kubeReserved', 'string-map'],
    ['featureGates', 'boolean-map'],
    ['allowedUnsafeSysctls', 'strings'],
    ['clusterDNS', 'strings'],
    ['authentication', 'object'],
    ['shutdownGracePeriod', 'duration'],
  ])('%s is typed by its Go type: %s', (field, kind) => {
    // THEN
    expect(KUBELET_CONFIG_FIELDS[field]).toBe(kind);
  });
});
