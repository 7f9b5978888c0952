import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer } from '../_util/app.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

async function gql(server: Server, query: string): Promise<Response> {
  return fetch(`${server.url}/api`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
}

/** The value of one sample line, e.g. `svc_ws_connections` or `name{a="b"}`; null when absent. */
function sample(text: string, series: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
}

describe('metrics', () => {
  let server: Server;
  let metricsUrl: string;
  beforeAll(async () => {
    server = await startTestServer({ env: { SVC_METRICS_ADDR: '127.0.0.1:0' } });
    expect(server.metricsAddress).not.toBeNull();
    expect(server.metricsAddress!.port).toBeGreaterThan(0);
    expect(server.metricsAddress!.port).not.toBe(server.address.port);
    metricsUrl = `http://127.0.0.1:${server.metricsAddress!.port}/metrics`;
  });
  afterAll(async () => server?.stop());

  it('is not served on the API port', async () => {
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('svc_http_requests_total');
  });

  it('counts requests, GraphQL operations and reports pool, loop lag and WebSockets', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await gql(server, 'query Info { serverInfo { version } }')).status).toBe(200);
    expect((await gql(server, 'query Info { serverInfo { version } }')).status).toBe(200);
    expect((await gql(server, 'query Me { me { id } }')).status).toBe(200);
    expect((await gql(server, '{ nope }')).status).toBe(200);

    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(
      sample(text, 'svc_http_requests_total{route="/healthz",method="GET",status="200"}'),
    ).toBe(1);
    expect(sample(text, 'svc_http_requests_total{route="/api",method="POST",status="200"}')).toBe(
      4,
    );
    expect(
      sample(text, 'svc_http_requests_total{route="unmatched",method="GET",status="404"}'),
    ).toBe(1);
    expect(
      sample(
        text,
        'svc_http_request_duration_seconds_count{route="/api",method="POST",status="200"}',
      ),
    ).toBe(4);
    expect(sample(text, 'svc_graphql_operations_total{operation="Info",outcome="ok"}')).toBe(2);
    expect(sample(text, 'svc_graphql_operations_total{operation="Me",outcome="error"}')).toBe(1);
    expect(
      sample(text, 'svc_graphql_operations_total{operation="anonymous",outcome="invalid"}'),
    ).toBe(1);
    expect(sample(text, 'svc_db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'svc_db_pool_connections{state="waiting"}')).toBe(0);
    expect(sample(text, 'svc_event_loop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'svc_ws_connections')).toBe(0);
    expect(sample(text, 'svc_ws_gathered_flushes_total')).toBe(0);
    expect(text).toContain('svc_process_cpu_seconds_total');
  });

  it('answers nothing but GET /metrics on its listener', async () => {
    expect((await fetch(metricsUrl.replace('/metrics', '/healthz'))).status).toBe(404);
    expect((await fetch(metricsUrl, { method: 'POST' })).status).toBe(404);
  });

  it('is off when SVC_METRICS_ADDR is unset', async () => {
    const plain = await startTestServer();
    try {
      expect(plain.metricsAddress).toBeNull();
    } finally {
      await plain.stop();
    }
  });
});
