import { sql } from 'kysely';

import type { Executor } from '../../db/database.js';
import type { DmRequestTable, DmSettingsTable } from '../../db/tables/dm.js';
import { keysetQuery, type KeysetPage } from '../paging/index.js';
import { sharingAWorkspace } from '../conversations/index.js';

// Direct-message settings, requests and blocks, executor first.

export async function findDmSettings(db: Executor, accountIds: readonly string[]) {
  if (accountIds.length === 0) return [];
  return db.selectFrom('dm_settings').selectAll().where('accountId', 'in', accountIds).execute();
}

export async function upsertDmSettings(db: Executor, row: DmSettingsTable) {
  await db
    .insertInto('dm_settings')
    .values(row)
    .onConflict((oc) =>
      oc
        .column('accountId')
        .doUpdateSet({ inbound: row.inbound, outbound: row.outbound, partners: row.partners }),
    )
    .execute();
}

/**
 * How `a` relates to each of `others`: blocked either way, contacts (members of a DIRECT
 * conversation together), sharing a workspace. Three queries whatever the number of others.
 */
export async function relationships(db: Executor, a: string, others: readonly string[]) {
  const out = new Map(
    others.map((id) => [id, { blocked: false, contact: false, sharedWorkspace: false }]),
  );
  if (others.length === 0) return out;
  const blocks = await db
    .selectFrom('user_block')
    .select(['blockerId', 'blockedId'])
    .where((eb) =>
      eb.or([
        eb.and([eb('blockerId', '=', a), eb('blockedId', 'in', others)]),
        eb.and([eb('blockedId', '=', a), eb('blockerId', 'in', others)]),
      ]),
    )
    .execute();
  for (const b of blocks) out.get(b.blockerId === a ? b.blockedId : b.blockerId)!.blocked = true;

  const contacts = await db
    .selectFrom('conversation_member as mine')
    .innerJoin('conversation as c', 'c.id', 'mine.conversationId')
    .innerJoin('conversation_member as theirs', 'theirs.conversationId', 'mine.conversationId')
    .select('theirs.accountId')
    .distinct()
    .where('mine.accountId', '=', a)
    .where('mine.state', '=', 'member')
    .where('c.kind', '=', 'direct')
    .where('theirs.accountId', 'in', others)
    .where('theirs.state', '=', 'member')
    .execute();
  for (const c of contacts) out.get(c.accountId)!.contact = true;

  for (const id of await sharingAWorkspace(db, a, others)) out.get(id)!.sharedWorkspace = true;
  return out;
}

export async function insertDmRequest(db: Executor, row: DmRequestTable) {
  await db.insertInto('dm_request').values(row).execute();
}

/** Times of the requests `fromId` sent since `since`, newest first (for the daily cap). */
export async function recentRequestTimes(db: Executor, fromId: string, since: number) {
  const rows = await db
    .selectFrom('dm_request')
    .select('createdAt')
    .where('fromId', '=', fromId)
    .where('createdAt', '>', since)
    .orderBy('createdAt', 'desc')
    .execute();
  return rows.map((r) => r.createdAt);
}

export async function findDmRequest(db: Executor, id: string) {
  return db.selectFrom('dm_request').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function requestsForConversation(db: Executor, conversationId: string) {
  return db
    .selectFrom('dm_request')
    .selectAll()
    .where('conversationId', '=', conversationId)
    .orderBy('createdAt', 'desc')
    .execute();
}

export async function requestsForConversations(db: Executor, conversationIds: readonly string[]) {
  if (conversationIds.length === 0) return [];
  return db
    .selectFrom('dm_request')
    .selectAll()
    .where('conversationId', 'in', conversationIds)
    .execute();
}

/** Pending requests to an account, newest first, without those from people it blocked. */
/** Pending requests to `toId`, newest first; one keyset page of them when `page` is given. */
export async function pendingRequestsTo(db: Executor, toId: string, page?: KeysetPage) {
  const q = db
    .selectFrom('dm_request as r')
    .selectAll('r')
    .where('r.toId', '=', toId)
    .where('r.state', '=', 'pending')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('user_block as b')
            .select('b.blockerId')
            .where((x) =>
              x.or([
                x.and([x('b.blockerId', '=', toId), x('b.blockedId', '=', x.ref('r.fromId'))]),
                x.and([x('b.blockedId', '=', toId), x('b.blockerId', '=', x.ref('r.fromId'))]),
              ]),
            ),
        ),
      ),
    );
  if (page) return keysetQuery(q, { at: 'r.createdAt', key: 'r.id' }, 'desc', page).execute();
  return q.orderBy('r.createdAt', 'desc').orderBy('r.id', 'desc').limit(500).execute();
}

/** Answers a pending request; false when it was no longer pending. */
export async function answerDmRequest(
  db: Executor,
  id: string,
  state: 'accepted' | 'declined',
  at: number,
) {
  const res = await db
    .updateTable('dm_request')
    .set({ state, respondedAt: at })
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Declines every pending request between two people (a block). */
export async function declineRequestsBetween(db: Executor, a: string, b: string, at: number) {
  await db
    .updateTable('dm_request')
    .set({ state: 'declined', respondedAt: at })
    .where('state', '=', 'pending')
    .where((eb) =>
      eb.or([
        eb.and([eb('fromId', '=', a), eb('toId', '=', b)]),
        eb.and([eb('fromId', '=', b), eb('toId', '=', a)]),
      ]),
    )
    .execute();
}

export async function insertBlock(db: Executor, blockerId: string, blockedId: string, at: number) {
  const res = await db
    .insertInto('user_block')
    .values({ blockerId, blockedId, createdAt: at })
    .onConflict((oc) => oc.columns(['blockerId', 'blockedId']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function deleteBlock(db: Executor, blockerId: string, blockedId: string) {
  const res = await db
    .deleteFrom('user_block')
    .where('blockerId', '=', blockerId)
    .where('blockedId', '=', blockedId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** One keyset page of the people `blockerId` blocked, most recent first. */
export async function blockedBy(db: Executor, blockerId: string, page: KeysetPage) {
  const q = db
    .selectFrom('user_block')
    .select(['blockedId', 'createdAt'])
    .where('blockerId', '=', blockerId);
  return keysetQuery(q, { at: 'createdAt', key: 'blockedId' }, 'desc', page).execute();
}

/**
 * The newest `per` messages (not replies, not deleted) of each conversation, oldest first within
 * each: what a DM request's recipient reads before answering. One windowed query.
 */
export async function newestMessagesOf(
  db: Executor,
  conversationIds: readonly string[],
  per: number,
) {
  if (conversationIds.length === 0) return [];
  const rows = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('message')
        .selectAll()
        .select(
          sql<number>`row_number() over (partition by "conversationId" order by "createdAt" desc, "id" desc)`.as(
            'rn',
          ),
        )
        .where('conversationId', 'in', conversationIds)
        .where('threadRootId', 'is', null)
        .where('deletedAt', 'is', null)
        .as('m'),
    )
    .selectAll('m')
    .where('m.rn', '<=', per)
    .orderBy('m.createdAt')
    .orderBy('m.id')
    .execute();
  return rows.map(({ rn: _rn, ...m }) => m);
}

/** The account's DM settings, its requests either way and its blocks either way (its purge). */
export async function deleteDmRowsOf(db: Executor, accountId: string) {
  await db.deleteFrom('dm_settings').where('accountId', '=', accountId).execute();
  await db
    .deleteFrom('dm_request')
    .where((eb) => eb.or([eb('fromId', '=', accountId), eb('toId', '=', accountId)]))
    .execute();
  await db
    .deleteFrom('user_block')
    .where((eb) => eb.or([eb('blockerId', '=', accountId), eb('blockedId', '=', accountId)]))
    .execute();
}
