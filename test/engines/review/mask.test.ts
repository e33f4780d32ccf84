import { MASK, maskSecrets } from '../../../lib/engines/review/mask';

const M = MASK;

/** Each line alone: what a reviewer would otherwise see of a secret, and what it must become. */
test.each([
  // An unquoted YAML value runs to the end of the line; only a flow mapping ends it at a comma.
  ['password: abc,def', `password: ${M}`],
  // A YAML comment is no part of the value.
  ['password: abc def # note', `password: ${M} # note`],
  ['{ password: abc, user: bob }', `{ password: ${M}, user: bob }`],
  ['- { name: db, password: abc;def }', `- { name: db, password: ${M} }`],
  ["password: 'it''s'", `password: '${M}'`],
  ['password: "unterminated', `password: "${M}`],
  // Flags, in unit files and scripts.
  [
    'ExecStart=/opt/bin/agent --token abc123 --log-level info',
    `ExecStart=/opt/bin/agent --token ${M} --log-level info`,
  ],
  ['agent --api-key "k-1" -v', `agent --api-key "${M}" -v`],
  ['agent -bootstrap-token=abc.def --verbose', `agent -bootstrap-token=${M} --verbose`],
  // HTTP Authorization headers keep their scheme.
  ['Authorization: Bearer eyJhbGciOi', `Authorization: Bearer ${M}`],
  ['curl -H "Authorization: Basic dXNlcjpw" https://x', `curl -H "Authorization: Basic ${M}" https://x`],
  ['{ "Proxy-Authorization": "Bearer abc", "Accept": "x" }', `{ "Proxy-Authorization": "Bearer ${M}", "Accept": "x" }`],
  // Key files and private keys by their names.
  ['tls.key: LS0tLS1CRUdJTi', `tls.key: ${M}`],
  ['  server.key: abc', `  server.key: ${M}`],
  ['rsa_private: abc', `rsa_private: ${M}`],
  ['signingKey: abc', `signingKey: ${M}`],
  // Secrets inside other values.
  ['Environment="BOOTSTRAP_TOKEN=abc.def" "LEVEL=2"', `Environment="BOOTSTRAP_TOKEN=${M}" "LEVEL=2"`],
  // Only the secret item: the other assignments and flags on the same line stay readable.
  ['Environment=BOOTSTRAP_TOKEN=abc.def LEVEL=2 MAX_PODS=110', `Environment=BOOTSTRAP_TOKEN=${M} LEVEL=2 MAX_PODS=110`],
  ['export API_TOKEN=abc NODE_NAME=n1', `export API_TOKEN=${M} NODE_NAME=n1`],
  [
    'KUBELET_ARGS=--node-ip=10.0.0.1 TOKEN=abc --max-pods=110',
    `KUBELET_ARGS=--node-ip=10.0.0.1 TOKEN=${M} --max-pods=110`,
  ],
  // Without a next item, an unquoted value still runs to the end of the line.
  ['PASSWORD=abc def', `PASSWORD=${M}`],
  ['url: https://h/x?page=1&token=abc&size=2', `url: https://h/x?page=1&token=${M}&size=2`],
  ['proxy: http://user:hunter2@proxy:3128', `proxy: http://user:${M}@proxy:3128`],
  ['{"a":{"token":"x"},"b":1}', `{"a":{"token":"${M}"},"b":1}`],
  [
    '"key": "-----BEGIN RSA PRIVATE KEY-----\\nMIIE\\n-----END RSA PRIVATE KEY-----\\n",',
    `"key": "-----BEGIN RSA PRIVATE KEY-----${M}-----END RSA PRIVATE KEY-----\\n",`,
  ],
])('masked: %s', (line, masked) => {
  // WHEN
  const out = maskSecrets(line);
  // THEN
  expect(out).toBe(masked);
});

/** Lines that hold no secret, or only refer to one: masking them would hide what a change does. */
test.each([
  'token: $token',
  'password: "${PASS}"',
  'token=$(aws secretsmanager get-secret-value \\',
  "  --region eu-west-1 --secret-id 'arn:x' --query SecretString --output text)",
  'agent --token $(cat /run/token)',
  'Authorization: Bearer ${TOKEN}',
  'proxy: http://user:$PROXY_PASSWORD@proxy:3128',
  'secretArn: arn:aws:secretsmanager:eu-west-1:1:secret:x',
  'authorization:',
  '  mode: Webhook',
  '- key: node-role.kubernetes.io/control-plane',
  'tlsPrivateKeyFile: /etc/kubernetes/pki/kubelet.key',
  'ssh_authorized_keys:',
  'Description=Fetch the kubelet bootstrap token (instance role, never stored in user data)',
  '"token": null,',
])('kept: %s', (line) => {
  // WHEN
  const out = maskSecrets(line);
  // THEN
  expect(out).toBe(line);
});

test('a block value under a secret key is masked to its end, and only to its end', () => {
  // GIVEN
  const text = [
    'ssh_keys:',
    '  rsa_private: |',
    '    line-one',
    '',
    '    line-two',
    '  rsa_public: ssh-rsa AAAA',
    'x: 1',
  ].join('\n');
  // WHEN
  const out = maskSecrets(text);
  // THEN
  expect(out.split('\n')).toEqual([
    'ssh_keys:',
    '  rsa_private: |',
    `    ${M}`,
    '',
    `    ${M}`,
    '  rsa_public: ssh-rsa AAAA',
    'x: 1',
  ]);
});
