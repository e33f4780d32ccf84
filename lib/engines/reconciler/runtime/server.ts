import * as http from 'node:http';
import { ReconcilerMetrics } from './metrics';

/** /healthz (the process serves), /readyz (a pass has completed and we are not stopping), /metrics. */
export function startOpsServer(
  port: number,
  metrics: ReconcilerMetrics,
  ready: () => boolean,
  host = '127.0.0.1',
): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = (req.url ?? '').split('?')[0];
    if (url === '/healthz') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    if (url === '/readyz') {
      const ok = ready();
      return void res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ready\n' : 'not ready\n');
    }
    if (url === '/metrics') {
      metrics.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
        (e: unknown) => res.writeHead(500).end(String(e)),
      );
      return undefined;
    }
    return void res.writeHead(404).end('not found\n');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
