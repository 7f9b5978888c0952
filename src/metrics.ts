import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

import type { Db } from './db/database.js';
import { LoopDelay } from './lib/loop-delay.js';

/**
 * Every metric the server exports, declared in one place and primed at zero. Each AppContext
 * has its own registry, so several apps in one test process do not collide.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests by route, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request latency by route, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly graphqlOperations = new Counter({
    name: 'svc_graphql_operations_total',
    help: 'GraphQL operations by operation name and outcome (ok, error, invalid: refused before running)',
    labelNames: ['operation', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly wsConnections = new Gauge({
    name: 'svc_ws_connections',
    help: 'Open WebSocket connections on this process',
    registers: [this.registry],
  });
  readonly wsSubscriptions = new Gauge({
    name: 'svc_ws_subscriptions',
    help: 'Active GraphQL subscriptions on this process',
    registers: [this.registry],
  });
  readonly wsGatheredFlushes = new Counter({
    name: 'svc_ws_gathered_flushes_total',
    help: 'WebSocket writes held past their turn of the event loop because it was busy (SVC_WS_WRITE_GATHER_MS)',
    registers: [this.registry],
  });
  private readonly loopDelay = new LoopDelay(10);

  constructor(db: Db) {
    collectDefaultMetrics({ register: this.registry, prefix: 'svc_' });
    const delay = this.loopDelay;
    new Gauge({
      name: 'svc_event_loop_lag_seconds',
      help: 'Event-loop delay (how late a timer due every 10 ms fired), 99th percentile since the last scrape',
      registers: [this.registry],
      collect() {
        this.set(delay.take(99));
      },
    });
    new Gauge({
      name: 'svc_db_pool_connections',
      help: 'Database pool connections by state',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const s = db.poolStats();
        this.set({ state: 'total' }, s.total);
        this.set({ state: 'idle' }, s.idle);
        this.set({ state: 'waiting' }, s.waiting);
      },
    });
    this.wsConnections.set(0);
    this.wsSubscriptions.set(0);
  }

  /** Operation names are client-chosen: keep the label set bounded. */
  graphqlOperation(name: string | null, outcome: 'ok' | 'error' | 'invalid'): void {
    const label = name && /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name) ? name : 'anonymous';
    this.graphqlOperations.inc({ operation: label, outcome });
  }

  close(): void {
    this.loopDelay.close();
    this.registry.clear();
  }
}
