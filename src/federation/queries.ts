import type { Executor } from '../db/database.js';
import type { S2sPeerTable } from '../db/tables/federation.js';

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
