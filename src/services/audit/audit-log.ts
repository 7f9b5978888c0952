import type { Logger } from 'pino';

import { assertInstanceOperator, type Actor } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import type { AuditKind, AuditLogTable } from '../../db/tables/audit.js';
import type { Tx } from '../../db/transaction.js';
import { validation } from '../../errors.js';
import { DAY_MS, type Clock } from '../../lib/clock.js';
import { decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { newId } from '../../lib/ids.js';
import { pastCursor } from '../paging/index.js';

import { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX } from './audit-page.js';

export { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX };

/** What a change tells the audit log. `actorId` is the operator's account id, or `cli`. */
export interface AuditEntry {
  /** `moderation` (the default) is kept for good; `command` rows follow SVC_AUDIT_RETENTION_DAYS. */
  kind?: AuditKind;
  action: string;
  actorId: string;
  target: string;
  reason?: string | null;
  details?: Record<string, unknown> | null;
}

/** An audit row as read: its details parsed, with the cursor that continues after it. */
export interface AuditView extends Omit<AuditLogTable, 'details'> {
  details: Record<string, unknown> | null;
  cursor: string;
}

export interface AuditPage {
  entries: AuditView[];
  /** Continues to older entries; null when there are none. */
  nextCursor: string | null;
  /** Goes back to newer entries; null when there are none. */
  prevCursor: string | null;
}

/** Rows the retention job deletes per transaction. */
export const AUDIT_PRUNE_BATCH = 500;

/**
 * The audit log: one row per moderation change and one JSON log line with the same fields,
 * written after the change commits. GraphQL and the CLI go through the same `record`, so the
 * only difference between their lines is `actor_id`.
 */
export class AuditLog {
  private readonly lineLog: Logger;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    log: Logger,
  ) {
    // Audit lines are records, not diagnostics: written at info whatever SVC_LOG_LEVEL says
    // (the CLI's logger is at warn), so a change never goes unlogged.
    this.lineLog = log.child({ subsystem: 'audit' }, { level: 'info' });
  }

  /** Writes the row in the caller's transaction; the log line follows the commit. */
  async record(tx: Tx, entry: AuditEntry): Promise<AuditView> {
    const row = {
      id: newId(),
      kind: entry.kind ?? 'moderation',
      action: entry.action,
      actorId: entry.actorId,
      target: entry.target,
      reason: entry.reason ?? null,
      details: entry.details ? JSON.stringify(entry.details) : null,
      createdAt: this.clock.now().getTime(),
    };
    await tx.db.insertInto('audit_log').values(row).execute();
    tx.onCommit(() => {
      this.lineLog.info(
        {
          audit_id: row.id,
          kind: row.kind,
          action: row.action,
          actor_id: row.actorId,
          target: row.target,
          reason: row.reason,
          details: entry.details ?? null,
          at: new Date(row.createdAt).toISOString(),
        },
        'audit',
      );
    });
    return toView(row);
  }

  /**
   * A page of the log, newest first, over (createdAt, id). `before` continues to older entries
   * (a page's nextCursor), `after` goes back to newer ones (its prevCursor).
   */
  async list(
    actor: Actor,
    opts: { before?: string | null; after?: string | null; limit?: number | null } = {},
  ): Promise<AuditPage> {
    assertInstanceOperator(actor);
    const limit = opts.limit ?? AUDIT_PAGE_DEFAULT;
    if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_PAGE_MAX) {
      throw validation(`limit must be a whole number from 1 to ${AUDIT_PAGE_MAX}`);
    }
    if (opts.before && opts.after) throw validation('give either before or after, not both');
    let q = this.db.kysely.selectFrom('audit_log').selectAll();
    if (opts.after) {
      const pos = decodeCursor(opts.after);
      q = q
        .where(pastCursor({ at: 'createdAt', key: 'id' }, 'asc', pos))
        .orderBy('createdAt', 'asc')
        .orderBy('id', 'asc');
      const rows = await q.limit(limit + 1).execute();
      const more = rows.length > limit;
      const entries = rows.slice(0, limit).reverse().map(toView);
      return {
        entries,
        prevCursor: more && entries[0] ? entries[0].cursor : null,
        nextCursor: entries.at(-1)?.cursor ?? null,
      };
    }
    if (opts.before) {
      const pos = decodeCursor(opts.before);
      q = q.where(pastCursor({ at: 'createdAt', key: 'id' }, 'desc', pos));
    }
    const rows = await q
      .orderBy('createdAt', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    const more = rows.length > limit;
    const entries = rows.slice(0, limit).map(toView);
    return {
      entries,
      nextCursor: more ? (entries.at(-1)?.cursor ?? null) : null,
      prevCursor: opts.before && entries[0] ? entries[0].cursor : null,
    };
  }

  /**
   * Deletes one batch of `command` rows older than the retention; answers how many. Each batch
   * is its own statement, so a run cut short leaves whole batches done and the next run
   * finishes the rest. `moderation` rows are never pruned.
   */
  async pruneCommandBatch(retentionDays: number, batch = AUDIT_PRUNE_BATCH): Promise<number> {
    const cutoff = this.clock.now().getTime() - retentionDays * DAY_MS;
    const ids = await this.db.kysely
      .selectFrom('audit_log')
      .select('id')
      .where('kind', '=', 'command')
      .where('createdAt', '<', cutoff)
      .orderBy('createdAt')
      .limit(batch)
      .execute();
    if (ids.length === 0) return 0;
    const res = await this.db.kysely
      .deleteFrom('audit_log')
      .where(
        'id',
        'in',
        ids.map((r) => r.id),
      )
      .where('kind', '=', 'command')
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  /** Prunes every `command` row past the retention (null: keep forever); answers how many. */
  async pruneCommandRows(retentionDays: number | null, batch = AUDIT_PRUNE_BATCH): Promise<number> {
    if (retentionDays === null) return 0;
    let total = 0;
    for (;;) {
      const n = await this.pruneCommandBatch(retentionDays, batch);
      total += n;
      if (n < batch) return total;
    }
  }
}

function toView(row: AuditLogTable): AuditView {
  return {
    id: row.id,
    kind: row.kind,
    action: row.action,
    actorId: row.actorId,
    target: row.target,
    reason: row.reason,
    details: row.details ? (JSON.parse(row.details) as Record<string, unknown>) : null,
    createdAt: Number(row.createdAt),
    cursor: encodeCursor({ at: Number(row.createdAt), id: row.id }),
  };
}
