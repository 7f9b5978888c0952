import { post } from './client.js';
import { percentile } from './proc.js';

/**
 * Runs `connections` request loops for `seconds`; returns requests/s and latency percentiles.
 * `headers` may be a list: loop i sends `headers[i % length]` (one signed-in person per loop).
 */
export async function httpLoad(
  url: string,
  body: string,
  headers: Record<string, string> | Array<Record<string, string>>,
  connections: number,
  seconds: number,
) {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async (_, i) => {
      const own = Array.isArray(headers)
        ? (headers[i % headers.length] as Record<string, string>)
        : headers;
      while (performance.now() < end) {
        const t = performance.now();
        const res = await post(url, body, own);
        if (res.status !== 200 || res.body.includes('"errors"')) errors++;
        latencies.push(performance.now() - t);
      }
    }),
  );
  return {
    requests: latencies.length,
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
  };
}
