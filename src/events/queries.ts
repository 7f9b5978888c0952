import { sql } from 'kysely';

import { everyColumn } from '../db/statements/columns.js';
import type { Executor } from '../db/database.js';
import { preparedQuery, type PreparedQuery } from '../db/statements/prepared.js';
import type { EventOutboxTable } from '../db/tables/events.js';
import type { Tx } from '../db/transaction.js';
import { FIRST_WROTE } from '../db/statements/write-then.js';

import type { BusEvent } from './bus.js';

// The event outbox's queries (its table's only writer; outbox.ts uses them).

/** Rows per statement: inside SQLite's and PostgreSQL's limits on bound parameters. */
export const CHUNK = 500;

/** The event an outbox row holds. */
export function toBusEvent(row: EventOutboxTable): BusEvent {
  return {
    topic: row.topic,
    type: row.type,
    at: row.at,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
  };
}

/** Writes outbox rows (in the caller's transaction), a few hundred per statement. */
export async function insertOutboxRows(db: Executor, rows: EventOutboxTable[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    await db
      .insertInto('event_outbox')
      .values(rows.slice(i, i + CHUNK))
      .execute();
  }
}

/**
 * `insertOutboxRows` held for the transaction's one statement of writes (`tx.defer`). The insert
 * of a few rows (a message's event, one per recipient of a small conversation) is a prepared
 * query, so the statement of writes it joins can run as a named statement.
 */
export async function deferOutboxRows(tx: Tx, rows: EventOutboxTable[]): Promise<void> {
  if (rows.length > 0 && rows.length <= PREPARED_ROWS) {
    await tx.defer(outboxInsert(rows.length).statement(tx.db, ...rows.flatMap(rowValues)));
    return;
  }
  for (let i = 0; i < rows.length; i += CHUNK) {
    await tx.defer(tx.db.insertInto('event_outbox').values(rows.slice(i, i + CHUNK)));
  }
}

/** Up to this many rows, an outbox insert is a prepared query (one per row count). */
const PREPARED_ROWS = 8;

const OUTBOX_COLUMNS = everyColumn<EventOutboxTable>()([
  'id',
  'topic',
  'type',
  'at',
  'payload',
  'origin',
  'createdAt',
]);

/** Each column's type, for a value selected as a row to insert (see outboxRowAfterStatement). */
const OUTBOX_TYPES: Record<(typeof OUTBOX_COLUMNS)[number], 'text' | 'bigint'> = {
  id: 'text',
  topic: 'text',
  type: 'text',
  at: 'bigint',
  payload: 'text',
  origin: 'text',
  createdAt: 'bigint',
};

const rowValues = (row: EventOutboxTable) => OUTBOX_COLUMNS.map((c) => row[c]);

const outboxInserts = new Map<number, PreparedQuery<unknown[], unknown>>();

function outboxInsert(count: number): PreparedQuery<unknown[], unknown> {
  let query = outboxInserts.get(count);
  if (!query) {
    query = preparedQuery(count * OUTBOX_COLUMNS.length, (db, ...values: unknown[]) =>
      db.insertInto('event_outbox').values(
        Array.from({ length: count }, (_, r) => {
          const at = (c: number) => values[r * OUTBOX_COLUMNS.length + c];
          return {
            id: at(0) as string,
            topic: at(1) as string,
            type: at(2) as string,
            at: at(3) as number,
            payload: at(4) as string,
            origin: at(5) as string | null,
            createdAt: at(6) as number,
          };
        }),
      ),
    );
    outboxInserts.set(count, query);
  }
  return query;
}

/**
 * The outbox row `row`, inserted only when the write before it in `writeThen` wrote a row
 * (PostgreSQL): an event announcing a change that may be no change (`Outbox.publishIfChanged`).
 */
export function outboxRowAfterStatement(db: Executor, row: EventOutboxTable) {
  return outboxRowAfterQuery.statement(db, ...rowValues(row));
}

const outboxRowAfterQuery = preparedQuery(OUTBOX_COLUMNS.length, (db, ...values: unknown[]) =>
  db
    .insertInto('event_outbox')
    .columns([...OUTBOX_COLUMNS])
    .expression(
      db
        // PostgreSQL reads a bare parameter in a select list as text: each is cast to its type.
        .selectNoFrom(
          OUTBOX_COLUMNS.map((c, i) =>
            sql`cast(${values[i]} as ${sql.raw(OUTBOX_TYPES[c])})`.as(c),
          ),
        )
        .where(FIRST_WROTE),
    ),
);

export async function deleteOutboxRows(db: Executor, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += CHUNK) {
    await db
      .deleteFrom('event_outbox')
      .where('id', 'in', ids.slice(i, i + CHUNK))
      .execute();
  }
}

export async function hasDueOutboxRows(db: Executor, cutoff: number): Promise<boolean> {
  const row = await db
    .selectFrom('event_outbox')
    .select('id')
    .where((eb) => eb.or([eb('origin', 'is', null), eb('createdAt', '<', cutoff)]))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** A row a drainer claimed, and whether it was taken over from a writer that publishes itself. */
export type ClaimedRow = EventOutboxTable & { takenOver: boolean };

/**
 * Takes over up to `limit` due rows for `origin`: they become this process's own rows, fresh for
 * another grace period, so no other drainer takes them while they are published. Oldest first.
 * `takenOver` says the row had a writer of its own (not the command line without Redis) that did
 * not publish it within the grace period: its event comes late.
 */
export async function claimOutboxRows(
  tx: Tx,
  cutoff: number,
  origin: string,
  now: number,
  limit: number,
): Promise<ClaimedRow[]> {
  let due = tx.db
    .selectFrom('event_outbox')
    .select(['id', 'origin'])
    .where((eb) => eb.or([eb('origin', 'is', null), eb('createdAt', '<', cutoff)]))
    .orderBy('id')
    .limit(limit);
  if (tx.dialect === 'postgres') due = due.forUpdate().skipLocked();
  const found = await due.execute();
  if (found.length === 0) return [];
  const writers = new Map(found.map((row) => [row.id, row.origin]));
  const rows = await tx.db
    .updateTable('event_outbox')
    .set({ origin, createdAt: now })
    .where(
      'id',
      'in',
      found.map((row) => row.id),
    )
    .returningAll()
    .execute();
  return rows
    .map((row) => ({ ...row, takenOver: (writers.get(row.id) ?? null) !== null }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
