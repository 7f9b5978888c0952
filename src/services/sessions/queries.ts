import { sql, type Expression } from 'kysely';

import type { Executor } from '../../db/database.js';
import { batchedOnRoot, BatchedReads, keysTable } from '../../db/statements/batched-reads.js';
import { everyColumn, objectMaker, prefixed } from '../../db/statements/columns.js';
import { preparedQuery } from '../../db/statements/prepared.js';
import type { SessionTable } from '../../db/tables/sessions.js';
import {
  ACCESS_COLUMNS,
  conversationAccess,
  type ConversationAccessRow,
} from '../conversations/index.js';
import { keysetQuery, type KeysetPage } from '../paging/index.js';
import { accountNotBlocked } from '../principals/index.js';

/**
 * Inserts a session unless a principal block covers its account (or the account is gone): one
 * statement, `insert ... select ... where not exists`, so a sign-in checks and writes in one
 * round trip. Whether a row was written.
 */
export async function insertSessionUnlessBlocked(
  db: Executor,
  row: NewSessionRow,
): Promise<boolean> {
  const res = await insertSessionQuery(db, ...sessionValues(row));
  return Number(res.numAffectedRows ?? 0n) === 1;
}

/** A session as it starts: not ended. */
export type NewSessionRow = Omit<SessionTable, 'endedAt' | 'endReason'>;

const sessionValues = (row: NewSessionRow) =>
  [
    row.id,
    row.tokenHash,
    row.accountId,
    row.deviceId,
    row.createdAt,
    row.expiresAt,
    row.ip,
    row.userAgent,
  ] as const;

/** The insert of a session unless blocked, as `insertSessionUnlessBlocked` describes it. */
const insertSession = (
  db: Executor,
  id: string,
  tokenHash: string,
  accountId: string,
  deviceId: string | null,
  createdAt: number,
  expiresAt: number,
  ip: string | null,
  userAgent: string | null,
) =>
  db
    .insertInto('session')
    .columns([
      'id',
      'tokenHash',
      'accountId',
      'deviceId',
      'createdAt',
      'expiresAt',
      'ip',
      'userAgent',
      'endedAt',
      'endReason',
    ])
    .expression(
      db
        .selectFrom('account')
        .select([
          // Typed: PostgreSQL reads a bare parameter in a select list as text.
          sql<string>`cast(${id} as text)`.as('id'),
          sql<string>`cast(${tokenHash} as text)`.as('tokenHash'),
          'account.id as accountId',
          sql<string | null>`cast(${deviceId} as text)`.as('deviceId'),
          sql<number>`cast(${createdAt} as bigint)`.as('createdAt'),
          sql<number>`cast(${expiresAt} as bigint)`.as('expiresAt'),
          sql<string | null>`cast(${ip} as text)`.as('ip'),
          sql<string | null>`cast(${userAgent} as text)`.as('userAgent'),
          sql<null>`null`.as('endedAt'),
          sql<null>`null`.as('endReason'),
        ])
        .where('account.id', '=', accountId)
        .where(accountNotBlocked()),
    );

const insertSessionQuery = preparedQuery(8, (db, ...values: ReturnType<typeof sessionValues>) =>
  insertSession(db, ...values),
);

/**
 * The same insert returning the new session's id, to start a session and a write that goes with
 * it in one statement (`writeThen`, PostgreSQL).
 */
export function insertSessionStatement(db: Executor, row: NewSessionRow) {
  return insertSessionReturningQuery.statement(db, ...sessionValues(row));
}

const insertSessionReturningQuery = preparedQuery(
  8,
  (db, ...values: ReturnType<typeof sessionValues>) => insertSession(db, ...values).returning('id'),
);

/** The live session of a token hash, with its account: a value, or the batch's key column. */
function liveSession(db: Executor, tokenHash: Expression<string>, now: number) {
  return db
    .selectFrom('session')
    .innerJoin('account', 'account.id', 'session.accountId')
    .select([
      'session.tokenHash',
      'session.id as sessionId',
      'session.accountId',
      'session.deviceId',
      'session.createdAt',
      'session.expiresAt',
      'account.username',
      'account.homeServer',
      'account.isOperator',
      'account.displayName',
      'account.email',
      'account.createdAt as accountCreatedAt',
      'account.deletionScheduledFor',
      'account.avatarPath',
    ])
    .where('session.tokenHash', '=', tokenHash)
    .where('session.endedAt', 'is', null)
    .where('session.expiresAt', '>', now)
    .where('account.deletedAt', 'is', null)
    .where(accountNotBlocked());
}

const liveSessionQuery = preparedQuery(2, (db, tokenHash: string, now: number) =>
  liveSession(db, sql.val(tokenHash), now),
);

type LiveSessionRow = NonNullable<Awaited<ReturnType<typeof liveSessionQuery>>['rows'][number]>;

/** The columns of a live session's row as `liveSession` names them; all, or no compiling. */
const LIVE_SESSION_COLUMNS = everyColumn<LiveSessionRow>()([
  'tokenHash',
  'sessionId',
  'accountId',
  'deviceId',
  'createdAt',
  'expiresAt',
  'username',
  'homeServer',
  'isOperator',
  'displayName',
  'email',
  'accountCreatedAt',
  'deletionScheduledFor',
  'avatarPath',
]);

/**
 * PostgreSQL only (array parameters): several token hashes in one statement, each looked up by
 * its key as the single read is: the read joined `lateral` to the keys. Written as `tokenHash =
 * any($1)`, a fresh database's generic plan scanned every account per batch
 * (test/foundation/batched-read-plans.test.ts). A key may name a conversation (`cid`, '' for
 * none): the session's access to it comes in the same row, its columns prefixed `a$`
 * (services/conversations/prefetched-access.ts).
 */
const liveSessionsQuery = preparedQuery(
  3,
  (db, tokenHashes: string[], conversationIds: string[], now: number) =>
    db
      .selectFrom(keysTable({ hash: tokenHashes, cid: conversationIds }))
      .innerJoinLateral(liveSession(db, sql.ref('k.hash'), now).as('x'), (j) => j.onTrue())
      .leftJoinLateral(
        conversationAccess(db, sql.ref('k.cid'), sql.ref('x.accountId')).as('a'),
        (j) => j.onTrue(),
      )
      .select([...prefixed('x', LIVE_SESSION_COLUMNS), 'k.cid'])
      .select(ACCESS_COLUMNS.map((c) => sql.ref(`a.${c}`).as(`a$${c}`))),
);

/**
 * The live session for a token hash, with its account, or undefined; and, on PostgreSQL, its
 * account's access to `conversationId` read in the same statement (`access`: the row, undefined
 * when the conversation does not exist). On SQLite, where a statement costs no round trip,
 * `access` is absent and the access check reads for itself. Runs on every request; on
 * PostgreSQL the reads of requests that arrive together go as one statement (BatchedReads).
 */
export async function findLiveSessionWithAccess(
  db: Executor,
  tokenHash: string,
  now: number,
  conversationId: string | null,
): Promise<
  { session: LiveSessionRow; access?: { row: ConversationAccessRow | undefined } } | undefined
> {
  const batch = batchedOnRoot(db, 'live-session', () => liveSessionReads(db));
  if (!batch) {
    const session = (await liveSessionQuery(db, tokenHash, now)).rows[0];
    return session && { session };
  }
  const row = await batch.get({ tokenHash, now, conversationId: conversationId ?? '' });
  if (!row) return undefined;
  const session = sessionOf(row);
  if (conversationId === null) return { session };
  const access = (row as { a$id: string | null }).a$id === null ? undefined : accessOf(row);
  return { session, access: { row: access } };
}

// The session's and the conversation's columns out of a batched read's joined row.
const sessionOf = objectMaker<LiveSessionRow>(LIVE_SESSION_COLUMNS.map((c) => [c, c]));
const accessOf = objectMaker<ConversationAccessRow>(ACCESS_COLUMNS.map((c) => [c, `a$${c}`]));

function liveSessionReads(db: Executor) {
  return new BatchedReads(
    async (keys: Array<{ tokenHash: string; now: number; conversationId: string }>) => {
      // One time for the batch, the latest of its requests': a session that expired meanwhile is
      // refused, as a read of its own a moment later would refuse it.
      const now = Math.max(...keys.map((k) => k.now));
      const { rows } = await liveSessionsQuery(
        db,
        keys.map((k) => k.tokenHash),
        keys.map((k) => k.conversationId),
        now,
      );
      return new Map(rows.map((r) => [`${r.tokenHash} ${r.cid}`, r]));
    },
    (k) => `${k.tokenHash} ${k.conversationId}`,
  );
}

export async function endSessions(
  db: Executor,
  filter: { sessionId?: string; accountId?: string; exceptSessionId?: string; deviceId?: string },
  now: number,
  reason: string,
): Promise<string[]> {
  // Compared with undefined, not truthiness: an empty id (say `revokeSession(id: "")`) must match
  // nothing rather than drop its condition and end every session of the account.
  if (
    filter.sessionId === undefined &&
    filter.accountId === undefined &&
    filter.deviceId === undefined
  ) {
    throw new Error('endSessions needs a sessionId, accountId or deviceId');
  }
  let q = db.selectFrom('session').select('id').where('endedAt', 'is', null);
  if (filter.sessionId !== undefined) q = q.where('id', '=', filter.sessionId);
  if (filter.accountId !== undefined) q = q.where('accountId', '=', filter.accountId);
  if (filter.deviceId !== undefined) q = q.where('deviceId', '=', filter.deviceId);
  if (filter.exceptSessionId !== undefined) q = q.where('id', '!=', filter.exceptSessionId);
  const ids = (await q.execute()).map((r) => r.id);
  if (ids.length === 0) return [];
  await db
    .updateTable('session')
    .set({ endedAt: now, endReason: reason })
    .where('id', 'in', ids)
    .where('endedAt', 'is', null)
    .execute();
  return ids;
}

/** Of the given session ids, those that are no longer live (ended, expired, account gone). */
export async function findDeadSessionIds(db: Executor, ids: string[], now: number) {
  if (ids.length === 0) return [];
  // One session (a socket's subscription checks its own): a prepared statement; on PostgreSQL
  // the checks of subscriptions that start together go as one (a reconnect storm's).
  if (ids.length === 1) {
    const batch = batchedOnRoot(db, 'session-live', () => sessionLiveReads(db));
    if (batch) return (await batch.get({ id: ids[0]!, now })) ? [] : ids;
    const { rows } = await sessionLiveQuery(db, ids[0]!, now);
    return rows.length === 0 ? ids : [];
  }
  const live = await liveSessionIds(db, now).where('session.id', 'in', ids).execute();
  const liveSet = new Set(live.map((r) => r.id));
  return ids.filter((id) => !liveSet.has(id));
}

/** Ids of live sessions (not ended, not expired, account there and not blocked). */
function liveSessionIds(db: Executor, now: number) {
  return db
    .selectFrom('session')
    .innerJoin('account', 'account.id', 'session.accountId')
    .select('session.id')
    .where('session.endedAt', 'is', null)
    .where('session.expiresAt', '>', now)
    .where('account.deletedAt', 'is', null)
    .where(accountNotBlocked());
}

const sessionLiveQuery = preparedQuery(2, (db, id: string, now: number) =>
  liveSessionIds(db, now).where('session.id', '=', id),
);

/** The same for a batch of ids (PostgreSQL), each looked up by its key (`keysTable`). */
const sessionsLiveQuery = preparedQuery(2, (db, ids: string[], now: number) =>
  db
    .selectFrom(keysTable({ id: ids }))
    .innerJoinLateral(
      liveSessionIds(db, now).where('session.id', '=', sql.ref<string>('k.id')).as('x'),
      (j) => j.onTrue(),
    )
    .select('x.id'),
);

function sessionLiveReads(db: Executor) {
  return new BatchedReads(
    async (keys: Array<{ id: string; now: number }>) => {
      // The latest time of the batch's checks, as for the session reads above.
      const now = Math.max(...keys.map((k) => k.now));
      const { rows } = await sessionsLiveQuery(
        db,
        keys.map((k) => k.id),
        now,
      );
      return new Map(rows.map((r) => [r.id, r]));
    },
    (k) => k.id,
  );
}

/**
 * Live sessions of an account, newest first: a page of them, or without one the newest 500 (the
 * operator's `svc session list`).
 */
export async function listLiveSessions(
  db: Executor,
  accountId: string,
  now: number,
  page?: KeysetPage,
) {
  const q = db
    .selectFrom('session')
    .select(['id', 'deviceId', 'createdAt', 'expiresAt', 'ip', 'userAgent'])
    .where('accountId', '=', accountId)
    .where('endedAt', 'is', null)
    .where('expiresAt', '>', now);
  if (page) return keysetQuery(q, { at: 'createdAt', key: 'id' }, 'desc', page).execute();
  return q.orderBy('createdAt', 'desc').orderBy('id', 'desc').limit(500).execute();
}

/** Binds a live session to a device (identity enrolment). */
export async function bindSessionToDevice(db: Executor, sessionId: string, deviceId: string) {
  await db.updateTable('session').set({ deviceId }).where('id', '=', sessionId).execute();
}

/** Every session of the account (its purge). */
export async function deleteSessionsOf(db: Executor, accountId: string) {
  await db.deleteFrom('session').where('accountId', '=', accountId).execute();
}
