import type { Executor } from '../db/database.js';
import type { S2sPeerTable } from '../db/tables/federation.js';
import { accountNotBlocked } from '../services/principals/index.js';

// Query functions of federation's tables, executor first (docs/federation.md).

export async function listKeyLog(db: Executor) {
  return db.selectFrom('server_key_log').selectAll().orderBy('seq').execute();
}

export async function insertKeyLogEntry(
  db: Executor,
  row: { seq: number; payload: string; signature: string; createdAt: number },
) {
  await db.insertInto('server_key_log').values(row).execute();
}

export async function getPeer(db: Executor, serverId: string) {
  return db.selectFrom('s2s_peer').selectAll().where('serverId', '=', serverId).executeTakeFirst();
}

export async function insertPeer(db: Executor, row: S2sPeerTable) {
  await db.insertInto('s2s_peer').values(row).execute();
}

export async function updatePeer(
  db: Executor,
  serverId: string,
  set: Pick<S2sPeerTable, 'keyLog' | 'currentKey' | 'roles' | 'refreshedAt'>,
) {
  await db.updateTable('s2s_peer').set(set).where('serverId', '=', serverId).execute();
}

/** Records a nonce; throws a unique violation when the scope has seen it already. */
export async function insertNonce(
  db: Executor,
  row: { scope: string; nonce: string; expiresAt: number },
) {
  await db.insertInto('s2s_nonce').values(row).execute();
}

export async function deleteExpiredNonces(db: Executor, now: number): Promise<number> {
  const res = await db.deleteFrom('s2s_nonce').where('expiresAt', '<', now).executeTakeFirst();
  return Number(res.numDeletedRows);
}

export async function insertOutboxCall(
  db: Executor,
  row: {
    id: string;
    serverId: string;
    path: string;
    body: string;
    nextAttemptAt: number;
    createdAt: number;
  },
) {
  await db
    .insertInto('s2s_outbox')
    .values({ ...row, attempts: 0, lastError: null })
    .execute();
}

export async function dueOutboxCalls(db: Executor, now: number, limit: number) {
  return db
    .selectFrom('s2s_outbox')
    .selectAll()
    .where('nextAttemptAt', '<=', now)
    .orderBy('nextAttemptAt')
    .orderBy('id')
    .limit(limit)
    .execute();
}

export async function listOutboxCalls(db: Executor) {
  return db.selectFrom('s2s_outbox').selectAll().orderBy('createdAt').execute();
}

export async function deleteOutboxCall(db: Executor, id: string) {
  await db.deleteFrom('s2s_outbox').where('id', '=', id).execute();
}

export async function postponeOutboxCall(
  db: Executor,
  id: string,
  set: { attempts: number; nextAttemptAt: number; lastError: string },
) {
  await db.updateTable('s2s_outbox').set(set).where('id', '=', id).execute();
}

export async function findRemoteDevice(db: Executor, accountId: string, deviceKey: string) {
  return db
    .selectFrom('remote_device')
    .selectAll()
    .where('accountId', '=', accountId)
    .where('deviceKey', '=', deviceKey)
    .executeTakeFirst();
}

export async function insertRemoteDevice(
  db: Executor,
  row: { accountId: string; deviceKey: string; createdAt: number },
) {
  await db
    .insertInto('remote_device')
    .values({ ...row, revokedAt: null })
    .onConflict((oc) => oc.columns(['accountId', 'deviceKey']).doNothing())
    .execute();
}

export async function countLiveRemoteDevices(db: Executor, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('remote_device')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('accountId', '=', accountId)
    .where('revokedAt', 'is', null)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Marks devices of a remote person revoked (all of them when `deviceKeys` is null). */
export async function revokeRemoteDevices(
  db: Executor,
  accountId: string,
  deviceKeys: string[] | null,
  at: number,
  seenBefore: number,
): Promise<number> {
  let q = db
    .updateTable('remote_device')
    .set({ revokedAt: at })
    .where('accountId', '=', accountId)
    .where('revokedAt', 'is', null)
    .where('createdAt', '<=', seenBefore);
  if (deviceKeys) {
    if (deviceKeys.length === 0) return 0;
    q = q.where('deviceKey', 'in', deviceKeys);
  }
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows);
}

export async function insertRelayHost(
  db: Executor,
  row: { accountId: string; hostServerId: string; firstUsedAt: number },
) {
  await db
    .insertInto('relay_host')
    .values(row)
    .onConflict((oc) => oc.columns(['accountId', 'hostServerId']).doNothing())
    .execute();
}

export async function hostsOfAccount(db: Executor, accountId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('relay_host')
    .select('hostServerId')
    .where('accountId', '=', accountId)
    .execute();
  return rows.map((r) => r.hostServerId);
}

// ---------------------------------------------------------------- events for remote people

/**
 * Records one event for a remote person; false when it was recorded already (by this process or
 * another one holding the same person's streams).
 */
export async function insertRemoteEvent(
  db: Executor,
  row: { accountId: string; eventId: string; body: string; createdAt: number },
): Promise<boolean> {
  const inserted = await db
    .insertInto('remote_event')
    .values({ ...row, deliveredAt: null })
    .onConflict((oc) => oc.columns(['accountId', 'eventId']).doNothing())
    .returning('seq')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** The delivery row of a remote person, created with their first event. */
export async function ensureEventDelivery(
  db: Executor,
  row: { accountId: string; relay: string; username: string; now: number },
): Promise<void> {
  await db
    .insertInto('remote_event_delivery')
    .values({
      accountId: row.accountId,
      relay: row.relay,
      username: row.username,
      attempts: 0,
      nextAttemptAt: row.now,
      leasedUntil: 0,
      lastError: null,
    })
    .onConflict((oc) => oc.column('accountId').doNothing())
    .execute();
}

export async function hasPendingRemoteEvents(db: Executor, accountId: string): Promise<boolean> {
  const row = await db
    .selectFrom('remote_event')
    .select('seq')
    .where('accountId', '=', accountId)
    .where('deliveredAt', 'is', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** People with undelivered events whose next attempt is due and whom nobody is sending to. */
export async function dueEventDeliveries(db: Executor, now: number, limit: number) {
  return db
    .selectFrom('remote_event_delivery as d')
    .select('d.accountId')
    .where('d.nextAttemptAt', '<=', now)
    .where('d.leasedUntil', '<=', now)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('remote_event as e')
          .select('e.seq')
          .whereRef('e.accountId', '=', 'd.accountId')
          .where('e.deliveredAt', 'is', null),
      ),
    )
    .limit(limit)
    .execute();
}

/**
 * Takes a person's delivery for one process until `until`: only one process sends a person's
 * events at a time, so they leave in order. Answers the row when taken, undefined when the
 * delivery is not due or another process holds it.
 */
export async function leaseEventDelivery(
  db: Executor,
  accountId: string,
  now: number,
  until: number,
) {
  return db
    .updateTable('remote_event_delivery')
    .set({ leasedUntil: until })
    .where('accountId', '=', accountId)
    .where('nextAttemptAt', '<=', now)
    .where('leasedUntil', '<=', now)
    .returningAll()
    .executeTakeFirst();
}

/** Ends a lease: after a delivery (attempts back to 0) or a failure (backoff). */
export async function releaseEventDelivery(
  db: Executor,
  accountId: string,
  set: { attempts: number; nextAttemptAt: number; lastError: string | null },
): Promise<void> {
  await db
    .updateTable('remote_event_delivery')
    .set({ ...set, leasedUntil: 0 })
    .where('accountId', '=', accountId)
    .execute();
}

/** A relay showed it is up: its people's postponed deliveries are due now. */
export async function wakeEventDeliveries(db: Executor, relay: string, now: number) {
  const res = await db
    .updateTable('remote_event_delivery')
    .set({ nextAttemptAt: now })
    .where('relay', '=', relay)
    .where('nextAttemptAt', '>', now)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/**
 * The accounts that may still get events from here: not deleted, no principal block covers
 * them, and a device of theirs from another server is not revoked.
 */
function reachableAccounts(db: Executor) {
  return db
    .selectFrom('account')
    .where('deletedAt', 'is', null)
    .where(accountNotBlocked())
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('remote_device')
          .select('remote_device.accountId')
          .whereRef('remote_device.accountId', '=', 'account.id')
          .where('remote_device.revokedAt', 'is', null),
      ),
    );
}

/** Whether a person of another server may still get events from here (`reachableAccounts`). */
export async function remotePersonReachable(db: Executor, accountId: string): Promise<boolean> {
  const row = await reachableAccounts(db)
    .select('id')
    .where('id', '=', accountId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Every person of another server who may still get events from here, with their home server. */
export async function reachableRemotePeople(db: Executor) {
  return reachableAccounts(db)
    .select(['id', 'username', 'homeServer'])
    .where('homeServer', 'is not', null)
    .execute();
}

/** The oldest undelivered events of a person, in the order recorded. */
export async function pendingRemoteEvents(db: Executor, accountId: string, limit: number) {
  return db
    .selectFrom('remote_event')
    .select(['seq', 'body'])
    .where('accountId', '=', accountId)
    .where('deliveredAt', 'is', null)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

export async function markRemoteEventsDelivered(
  db: Executor,
  accountId: string,
  seqs: number[],
  at: number,
): Promise<void> {
  if (seqs.length === 0) return;
  await db
    .updateTable('remote_event')
    .set({ deliveredAt: at })
    .where('accountId', '=', accountId)
    .where('seq', 'in', seqs)
    .execute();
}

/** Drops a person's undelivered events (blocked here, or no device left). */
export async function discardRemoteEvents(db: Executor, accountId: string): Promise<number> {
  const res = await db
    .deleteFrom('remote_event')
    .where('accountId', '=', accountId)
    .where('deliveredAt', 'is', null)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * The store's bounds: delivered rows older than `deliveredBefore`, undelivered ones recorded
 * before `recordedBefore`. Answers how many undelivered events were dropped.
 */
export async function sweepRemoteEvents(
  db: Executor,
  o: { deliveredBefore: number; recordedBefore: number },
): Promise<number> {
  await db
    .deleteFrom('remote_event')
    .where('deliveredAt', 'is not', null)
    .where('deliveredAt', '<', o.deliveredBefore)
    .execute();
  const res = await db
    .deleteFrom('remote_event')
    .where('deliveredAt', 'is', null)
    .where('createdAt', '<', o.recordedBefore)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** People with more than `cap` undelivered events. */
export async function overfullRemoteBacklogs(db: Executor, cap: number) {
  return db
    .selectFrom('remote_event')
    .select('accountId')
    .where('deliveredAt', 'is', null)
    .groupBy('accountId')
    .having((eb) => eb.fn.countAll(), '>', cap)
    .execute();
}

/** Keeps a person's newest `cap` undelivered events; answers how many older ones were dropped. */
export async function trimRemoteBacklog(
  db: Executor,
  accountId: string,
  cap: number,
): Promise<number> {
  const edge = await db
    .selectFrom('remote_event')
    .select('seq')
    .where('accountId', '=', accountId)
    .where('deliveredAt', 'is', null)
    .orderBy('seq', 'desc')
    .offset(cap)
    .limit(1)
    .executeTakeFirst();
  if (!edge) return 0;
  const res = await db
    .deleteFrom('remote_event')
    .where('accountId', '=', accountId)
    .where('deliveredAt', 'is', null)
    .where('seq', '<=', edge.seq)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * Relay side: remembers an event a host delivered for a local person; false when it was
 * remembered already (a copy: not published again).
 */
export async function insertRelayEvent(
  db: Executor,
  row: { accountId: string; hostServerId: string; eventId: string; expiresAt: number },
): Promise<boolean> {
  const inserted = await db
    .insertInto('relay_event')
    .values(row)
    .onConflict((oc) => oc.columns(['accountId', 'hostServerId', 'eventId']).doNothing())
    .returning('eventId')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function deleteExpiredRelayEvents(db: Executor, now: number): Promise<number> {
  const res = await db.deleteFrom('relay_event').where('expiresAt', '<', now).executeTakeFirst();
  return Number(res.numDeletedRows);
}
