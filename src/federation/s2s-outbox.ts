import type { Logger } from 'pino';

import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';

import {
  deleteExpiredNonces,
  deleteOutboxCall,
  dueOutboxCalls,
  postponeOutboxCall,
} from './queries.js';
import { UpstreamError, type S2sClient } from './s2s-client.js';

/** First retry after this long; each later one waits twice as long, up to MAX_BACKOFF_MS. */
export const FIRST_BACKOFF_MS = 5_000;
export const MAX_BACKOFF_MS = 60 * 60_000;
/** A call nobody accepted for this long is dropped, with a log line. */
export const GIVE_UP_AFTER_MS = 7 * 24 * 60 * 60_000;

/** What a sender of signed calls to other servers needs: the outbox, and the event delivery. */
export interface S2sSenderDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  client: S2sClient;
  /** How often it looks for due work, in milliseconds. */
  intervalMs?: number;
}

/**
 * Delivers the calls in `s2s_outbox` (written in the transaction of what they announce, so a
 * call is never lost to a crash between the commit and the send): each due call is sent
 * signed; a 2xx answer deletes it, anything else (a refusal, a timeout, no answer) postpones it
 * with exponential backoff. Calls are idempotent at the receiver, so two processes draining at
 * once do no harm. Also sweeps the nonce table.
 */
export class S2sOutbox {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(private readonly deps: S2sSenderDeps) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.drain(), this.deps.intervalMs ?? 2_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Sends every due call once; answers how many were delivered. */
  drain(): Promise<number> {
    this.running ??= this.drainOnce().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async drainOnce(): Promise<number> {
    const { db, clock, log, client } = this.deps;
    let delivered = 0;
    try {
      const now = clock.now().getTime();
      await deleteExpiredNonces(db.kysely, now);
      const due = await dueOutboxCalls(db.kysely, now, 50);
      for (const call of due) {
        let error: string | null = null;
        try {
          const answer = await client.call(call.serverId, {
            method: 'POST',
            path: call.path,
            headers: { 'content-type': 'application/json' },
            body: Buffer.from(call.body, 'utf8'),
          });
          if (answer.status < 200 || answer.status >= 300) error = `answered ${answer.status}`;
        } catch (err) {
          error = err instanceof UpstreamError ? err.message : String(err);
        }
        const at = clock.now().getTime();
        if (error === null) {
          await deleteOutboxCall(db.kysely, call.id);
          delivered++;
          continue;
        }
        if (at - Number(call.createdAt) > GIVE_UP_AFTER_MS) {
          log.error(
            { peer: call.serverId, path: call.path, error },
            's2s call dropped after a week',
          );
          await deleteOutboxCall(db.kysely, call.id);
          continue;
        }
        const attempts = call.attempts + 1;
        const wait = Math.min(FIRST_BACKOFF_MS * 2 ** (attempts - 1), MAX_BACKOFF_MS);
        await postponeOutboxCall(db.kysely, call.id, {
          attempts,
          nextAttemptAt: at + wait,
          lastError: error.slice(0, 500),
        });
        log.warn({ peer: call.serverId, path: call.path, attempts, error }, 's2s call postponed');
      }
    } catch (err) {
      log.error({ err }, 's2s outbox drain failed');
    }
    return delivered;
  }
}
