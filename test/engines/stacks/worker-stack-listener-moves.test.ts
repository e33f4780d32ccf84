/**
 * Renaming a listener, or moving a port from one listener to another, must deploy: CloudFormation must never hold two
 * listeners on one port of a load balancer (see worker-stack-transition.ts for how an update is applied).
 */
import { example, variant } from '../../helpers/clusters';
import { synthCluster } from '../../helpers/synth';
import { listenerPortConflicts } from './worker-stack-transition';
import { Json } from '../../helpers/json';

const prod = (mutate: (raw: Json) => void) => synthCluster(variant('prod-eu1', mutate)).json;
const BEFORE = () => synthCluster(example('prod-eu1')).json;

const MOVES: Array<[string, (raw: Json) => void]> = [
  ['a listener renamed', (raw) => (raw.spec.listeners[0].name = 'https')],
  ['both listeners renamed', (raw) => raw.spec.listeners.forEach((l: Json) => (l.name = `${l.name}-v2`))],
  [
    'port 443 moved to a new listener, the old one moved to 8443',
    (raw) => {
      raw.spec.listeners[0].port = 8443;
      raw.spec.listeners.push({
        name: 'ingress-https-v2',
        port: 443,
        nodePort: 30444,
        healthCheck: { protocol: 'HTTP', port: 30254, path: '/healthz' },
      });
    },
  ],
  [
    'the two listeners swap ports',
    (raw) =>
      ([raw.spec.listeners[0].port, raw.spec.listeners[1].port] = [
        raw.spec.listeners[1].port,
        raw.spec.listeners[0].port,
      ]),
  ],
  [
    'a listener removed and another one added on its port',
    (raw) => (raw.spec.listeners[1] = { name: 'plain', port: 80, nodePort: 30081 }),
  ],
  [
    'a listener turned into TLS on the same port',
    (raw) =>
      Object.assign(raw.spec.listeners[0], {
        protocol: 'TLS',
        certificateArn: 'arn:aws:acm:eu-west-1:111111111111:certificate/0f0e0d0c-0b0a-0908-0706-050403020100',
      }),
  ],
  [
    'the load balancer made internet-facing (replaced), listeners renamed at once',
    (raw) => {
      raw.spec.loadBalancer.scheme = 'internet-facing';
      raw.spec.listeners[0].name = 'https';
    },
  ],
];

test.each(MOVES)('%s: never two listeners on one port during the update', (_what, mutate) => {
  // GIVEN
  const before = BEFORE();
  // WHEN
  const after = prod(mutate);
  // THEN
  expect(listenerPortConflicts(before, after)).toEqual([]);
  expect(listenerPortConflicts(after, before)).toEqual([]); // and the way back (a rollback, or the revert)
});

describe('the check is live', () => {
  test('listener ids from the name (the former shape): a rename creates a second listener on the port before the old one goes', () => {
    // GIVEN the same rename, with each listener's logical id derived from its name as before (its target group's name)
    const byName = (t: Json) => {
      const out = { ...t, Resources: {} as Json };
      for (const [id, r] of Object.entries<Json>(t.Resources)) {
        out.Resources[
          r.Type === 'AWS::ElasticLoadBalancingV2::Listener'
            ? `Listener-${r.Properties.DefaultActions[0].TargetGroupArn.Ref}`
            : id
        ] = r;
      }
      return out;
    };
    // WHEN
    const conflicts = listenerPortConflicts(byName(BEFORE()), byName(prod(MOVES[0][1])));
    // THEN
    expect(conflicts).toEqual([
      expect.stringMatching(/:443 held by Listener-.*https.* \(created\), Listener-.*ingresshttps.* \(removed\)$/),
    ]);
  });

  test("two listeners updated in place to each other's port could meet (CloudFormation may update either first)", () => {
    // GIVEN
    const lb = { Ref: 'Lb' };
    const t = (a: number, b: number) => ({
      Resources: {
        A: { Type: 'AWS::ElasticLoadBalancingV2::Listener', Properties: { LoadBalancerArn: lb, Port: a } },
        B: { Type: 'AWS::ElasticLoadBalancingV2::Listener', Properties: { LoadBalancerArn: lb, Port: b } },
      },
    });
    // WHEN / THEN
    expect(listenerPortConflicts(t(80, 81), t(81, 80))).toEqual([
      '{"Ref":"Lb"}:80 held by A, B',
      '{"Ref":"Lb"}:81 held by A, B',
    ]);
    expect(listenerPortConflicts(t(80, 81), t(80, 82))).toEqual([]);
  });
});
