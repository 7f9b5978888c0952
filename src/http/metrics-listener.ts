import http from 'node:http';

import type { Metrics } from '../metrics.js';

/** The separate listener that serves GET /metrics (SVC_METRICS_ADDR); nothing else. */
export async function startMetricsListener(
  metrics: Metrics,
  addr: { host: string; port: number },
): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    metrics.registry
      .metrics()
      .then((text) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text);
      })
      .catch(() => {
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end('{"error":"internal error"}');
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(addr.port, addr.host, () => resolve());
  });
  return server;
}
