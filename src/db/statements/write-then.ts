import { CompiledQuery, sql } from 'kysely';

import { shiftPlaceholders } from './deferred-writes.js';
import { composedStatement } from './prepared.js';

/**
 * The condition of a write that follows another in `writeThen`: true when the first wrote a row.
 * Only for a statement `writeThen` runs (it names the first write's rows `written`).
 */
export const FIRST_WROTE = sql<boolean>`exists (select 1 from "written")`;

/**
 * PostgreSQL: `first` (a write returning a row per row it wrote) and `then` (a write conditioned
 * on `FIRST_WROTE`) in one statement, atomic without a transaction: one round trip instead of
 * `BEGIN`, the two writes and `COMMIT`. Its one row's `written` counts the rows `first` wrote.
 * Used for a key sign-in (the session, then the device's last use) and for an event that only a
 * change announces (the change, then its outbox row: `Outbox.publishIfChanged`).
 * Named when both parts are (db/statements/prepared.ts). SQLite has no writes inside `WITH`: there the
 * caller runs the two in a transaction.
 */
export function writeThen(
  first: CompiledQuery,
  then: CompiledQuery,
): CompiledQuery<{ written: number | string }> {
  const text = composedStatement(
    'writeThen',
    [first.sql, then.sql],
    () =>
      `with written as (${first.sql}), ` +
      `followed as (${shiftPlaceholders(then.sql, first.parameters.length)}) ` +
      `select count(*) as "written" from written`,
  );
  return CompiledQuery.raw(text, [...first.parameters, ...then.parameters]) as CompiledQuery<{
    written: number | string;
  }>;
}
