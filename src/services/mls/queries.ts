import { sql } from 'kysely';

import type { Dialect, Executor } from '../../db/database.js';
import type {
  MlsCommitTable,
  MlsGroupDeviceTable,
  MlsKeyPackageTable,
  MlsMessageTable,
  MlsWelcomeTable,
} from '../../db/tables/mls.js';

// The MLS area's tables (docs/e2ee.md); every write to them is here.

// ---- key packages

export async function insertKeyPackages(db: Executor, rows: MlsKeyPackageTable[]) {
  if (rows.length === 0) return;
  await db
    .insertInto('mls_key_package')
    .values(rows)
    .onConflict((oc) => oc.columns(['deviceId', 'hash']).doNothing())
    .execute();
}

/** Drops the device's last-resort package: a new one replaces it. */
export async function deleteLastResort(db: Executor, deviceId: string) {
  await db
    .deleteFrom('mls_key_package')
    .where('deviceId', '=', deviceId)
    .where('lastResort', '=', 1)
    .execute();
}

/** Single-use packages of a device not yet claimed and not expired. */
export async function countAvailable(db: Executor, deviceIds: readonly string[], now: number) {
  if (deviceIds.length === 0) return new Map<string, number>();
  const rows = await db
    .selectFrom('mls_key_package')
    .select(['deviceId', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('deviceId', 'in', deviceIds)
    .where('lastResort', '=', 0)
    .where('claimedAt', 'is', null)
    .where('expiresAt', '>', now)
    .groupBy('deviceId')
    .execute();
  return new Map(rows.map((r) => [r.deviceId, Number(r.n)]));
}

/**
 * Claims one single-use package of the device (the oldest), or failing that returns its
 * last-resort package unclaimed. A claim lost to a concurrent one is retried with the next.
 */
export async function claimOne(
  db: Executor,
  deviceId: string,
  claimedBy: string,
  now: number,
): Promise<MlsKeyPackageTable | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const next = await db
      .selectFrom('mls_key_package')
      .selectAll()
      .where('deviceId', '=', deviceId)
      .where('lastResort', '=', 0)
      .where('claimedAt', 'is', null)
      .where('expiresAt', '>', now)
      .orderBy('createdAt')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    if (!next) break;
    const res = await db
      .updateTable('mls_key_package')
      .set({ claimedAt: now, claimedBy })
      .where('id', '=', next.id)
      .where('claimedAt', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 1) return { ...next, claimedAt: now, claimedBy };
  }
  return db
    .selectFrom('mls_key_package')
    .selectAll()
    .where('deviceId', '=', deviceId)
    .where('lastResort', '=', 1)
    .where('expiresAt', '>', now)
    .orderBy('createdAt', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The devices of handed-out key packages (claimed, or last-resort) named by their refs. */
export async function devicesOfRefs(db: Executor, refs: readonly string[]) {
  if (refs.length === 0) return new Map<string, string>();
  const rows = await db
    .selectFrom('mls_key_package')
    .select(['ref', 'deviceId'])
    .where('ref', 'in', refs)
    .where((eb) => eb.or([eb('claimedAt', 'is not', null), eb('lastResort', '=', 1)]))
    .execute();
  return new Map(rows.map((r) => [r.ref, r.deviceId]));
}

/**
 * Deletes key packages that can no longer be handed out or matched: expired ones, those of
 * revoked devices, and single-use ones claimed before `claimedBefore`.
 */
export async function pruneKeyPackages(db: Executor, now: number, claimedBefore: number) {
  const res = await db
    .deleteFrom('mls_key_package')
    .where((eb) =>
      eb.or([
        eb('expiresAt', '<=', now),
        eb.and([eb('claimedAt', 'is not', null), eb('claimedAt', '<=', claimedBefore)]),
        eb(
          'deviceId',
          'in',
          eb.selectFrom('device').select('id').where('revokedAt', 'is not', null),
        ),
      ]),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

// ---- groups

/**
 * The group row. On PostgreSQL `lock` holds it to the transaction's end (SQLite has one writer):
 * `update` for a Commit, `share` for a message (many at once, but no Commit meanwhile).
 */
export async function findGroup(
  db: Executor,
  conversationId: string,
  lock?: { dialect: Dialect; mode: 'update' | 'share' },
) {
  if (lock?.dialect === 'postgres') {
    const mode = lock.mode === 'update' ? sql`for update` : sql`for share`;
    const res = await sql<{
      conversationId: string;
      incarnation: number;
      epoch: number | string;
    }>`select "conversationId", incarnation, epoch from mls_group where "conversationId" = ${conversationId} ${mode}`.execute(
      db,
    );
    const row = res.rows[0];
    return row ? { ...row, epoch: Number(row.epoch) } : undefined;
  }
  const row = await db
    .selectFrom('mls_group')
    .select(['conversationId', 'incarnation', 'epoch'])
    .where('conversationId', '=', conversationId)
    .executeTakeFirst();
  return row ? { ...row, epoch: Number(row.epoch) } : undefined;
}

export async function insertGroup(db: Executor, conversationId: string, now: number) {
  await db
    .insertInto('mls_group')
    .values({ conversationId, incarnation: 1, epoch: 1, createdAt: now, updatedAt: now })
    .execute();
}

/** Starts the group's next incarnation (after its first Commit, at epoch 1). */
export async function restartGroup(
  db: Executor,
  conversationId: string,
  incarnation: number,
  now: number,
) {
  await db
    .updateTable('mls_group')
    .set({ incarnation, epoch: 1, updatedAt: now })
    .where('conversationId', '=', conversationId)
    .execute();
}

/** Moves the group from `epoch` to `epoch + 1`; false when another Commit moved it first. */
export async function advanceEpoch(
  db: Executor,
  conversationId: string,
  incarnation: number,
  epoch: number,
  now: number,
) {
  const res = await db
    .updateTable('mls_group')
    .set({ epoch: epoch + 1, updatedAt: now })
    .where('conversationId', '=', conversationId)
    .where('incarnation', '=', incarnation)
    .where('epoch', '=', epoch)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function insertCommit(db: Executor, row: MlsCommitTable) {
  await db.insertInto('mls_commit').values(row).execute();
}

export async function commitsAfter(
  db: Executor,
  conversationId: string,
  incarnation: number,
  fromEpoch: number,
  limit: number,
) {
  const rows = await db
    .selectFrom('mls_commit')
    .selectAll()
    .where('conversationId', '=', conversationId)
    .where('incarnation', '=', incarnation)
    .where('epoch', '>=', fromEpoch)
    .orderBy('epoch')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, epoch: Number(r.epoch), createdAt: Number(r.createdAt) }));
}

export async function insertWelcomes(db: Executor, rows: MlsWelcomeTable[]) {
  if (rows.length > 0) await db.insertInto('mls_welcome').values(rows).execute();
}

export async function welcomesFor(
  db: Executor,
  deviceId: string,
  opts: {
    conversationId: string | null;
    afterId: string | null;
    beforeId: string | null;
    limit: number;
  },
) {
  // Ids grow with time (ids.ts), so the id alone orders Welcomes oldest first; going `before`
  // walks back and the page is put in order again.
  let q = db
    .selectFrom('mls_welcome')
    .selectAll()
    .where('deviceId', '=', deviceId)
    .orderBy('id', opts.beforeId ? 'desc' : 'asc')
    .limit(opts.limit);
  if (opts.conversationId) q = q.where('conversationId', '=', opts.conversationId);
  if (opts.afterId) q = q.where('id', '>', opts.afterId);
  if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
  const rows = await q.execute();
  if (opts.beforeId) rows.reverse();
  return rows.map((r) => ({ ...r, epoch: Number(r.epoch), createdAt: Number(r.createdAt) }));
}

// ---- the group's devices

export async function groupDevices(db: Executor, conversationId: string) {
  return db
    .selectFrom('mls_group_device')
    .selectAll()
    .where('conversationId', '=', conversationId)
    .orderBy('addedAt')
    .orderBy('deviceId')
    .execute();
}

export async function addGroupDevices(db: Executor, rows: MlsGroupDeviceTable[]) {
  if (rows.length === 0) return;
  await db
    .insertInto('mls_group_device')
    .values(rows)
    .onConflict((oc) => oc.columns(['conversationId', 'deviceId']).doNothing())
    .execute();
}

export async function removeGroupDevices(
  db: Executor,
  conversationId: string,
  deviceIds: readonly string[],
) {
  if (deviceIds.length === 0) return;
  await db
    .deleteFrom('mls_group_device')
    .where('conversationId', '=', conversationId)
    .where('deviceId', 'in', deviceIds)
    .execute();
}

/**
 * Devices still in the group that must leave it: revoked or gone devices, and devices of
 * accounts that are no longer members (left, removed, purged).
 */
export async function pendingRemovals(db: Executor, conversationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('mls_group_device as g')
    .leftJoin('device as d', 'd.id', 'g.deviceId')
    .leftJoin('conversation_member as cm', (j) =>
      j
        .onRef('cm.conversationId', '=', 'g.conversationId')
        .onRef('cm.accountId', '=', 'g.accountId'),
    )
    .select('g.deviceId')
    .where('g.conversationId', '=', conversationId)
    .where((eb) =>
      eb.or([
        eb('d.id', 'is', null),
        eb('d.revokedAt', 'is not', null),
        eb('cm.state', 'is', null),
        eb('cm.state', '!=', 'member'),
      ]),
    )
    .orderBy('g.deviceId')
    .execute();
  return rows.map((r) => r.deviceId);
}

/**
 * Live devices of the conversation's members that are set up for encryption (a key package
 * published) and not in the group yet: a device linked after its account joined, or a member
 * who accepted an invitation. A member's device adds them with a Commit.
 */
export async function pendingAdditions(db: Executor, conversationId: string) {
  return db
    .selectFrom('device as d')
    .innerJoin('conversation_member as cm', (j) =>
      j.onRef('cm.accountId', '=', 'd.accountId').on('cm.conversationId', '=', conversationId),
    )
    .leftJoin('mls_group_device as g', (j) =>
      j.onRef('g.deviceId', '=', 'd.id').on('g.conversationId', '=', conversationId),
    )
    .select(['d.id as deviceId', 'd.accountId as userId'])
    .where('cm.state', '=', 'member')
    .where('d.revokedAt', 'is', null)
    .where('d.keyPackage', 'is not', null)
    .where('g.deviceId', 'is', null)
    .orderBy('d.accountId')
    .orderBy('d.id')
    .execute();
}

/** Encrypted conversations with a group that the account is a member of. */
export async function groupsOfMember(db: Executor, accountId: string) {
  return db
    .selectFrom('mls_group as g')
    .innerJoin('conversation_member as cm', (j) =>
      j.onRef('cm.conversationId', '=', 'g.conversationId').on('cm.accountId', '=', accountId),
    )
    .select('g.conversationId')
    .where('cm.state', '=', 'member')
    .execute();
}

/** Live devices of the conversation's members among `deviceIds` (for adding to the group). */
export async function memberDevices(
  db: Executor,
  conversationId: string,
  deviceIds: readonly string[],
) {
  if (deviceIds.length === 0) return [];
  return db
    .selectFrom('device as d')
    .innerJoin('conversation_member as cm', (j) =>
      j.onRef('cm.accountId', '=', 'd.accountId').on('cm.conversationId', '=', conversationId),
    )
    .select(['d.id', 'd.accountId'])
    .where('d.id', 'in', deviceIds)
    .where('d.revokedAt', 'is', null)
    .where('cm.state', '=', 'member')
    .execute();
}

/** Live devices of an account, oldest first, with the account's current key identity. */
export async function liveDevicesOf(db: Executor, accountId: string) {
  return db
    .selectFrom('device')
    .select(['id', 'accountId'])
    .where('accountId', '=', accountId)
    .where('revokedAt', 'is', null)
    .orderBy('createdAt')
    .orderBy('id')
    .execute();
}

// ---- encrypted messages

export async function insertMlsMessage(db: Executor, row: MlsMessageTable) {
  await db.insertInto('mls_message').values(row).execute();
}

export async function mlsMessages(db: Executor, messageIds: readonly string[]) {
  if (messageIds.length === 0) return [];
  const rows = await db
    .selectFrom('mls_message')
    .selectAll()
    .where('messageId', 'in', messageIds)
    .execute();
  return rows.map((r) => ({ ...r, epoch: Number(r.epoch) }));
}
