import { sql, type RawBuilder } from 'kysely';

import type { Executor } from '../../db/database.js';
import { keysetRows, pastCursor, type KeysetPage } from '../paging/index.js';

import { INVITE_TTL_MS } from './queries.js';

// The member lists of the conversations on a page, each read for all of them in one query:
// a page of each list (`Conversation.members`, `memberIds`), the counts, the caller's own rows
// and the pending invitees. None reads a channel's whole list.

/** One member in a member list: its place in the list is (`joinedAt`, `accountId`). */
export interface MemberListRow {
  conversationId: string;
  accountId: string;
  joinedAt: number;
}

const ORDER = { at: 'joinedAt', key: 'accountId' } as const;

/**
 * One page of the members (not pending invitees) of each conversation, in the order they
 * joined (then account id): at most `page.limit` rows each, past the page's cursor. One query for
 * every conversation; the same cursor applies to each. Both read conversation_member_order_idx in
 * the list's order: one conversation's page stops after `page.limit` rows of it; several are
 * numbered per conversation, which reads each one's rows past the cursor.
 */
export async function memberPages(
  db: Executor,
  conversationIds: readonly string[],
  page: KeysetPage,
): Promise<Map<string, MemberListRow[]>> {
  const out = new Map<string, MemberListRow[]>();
  if (conversationIds.length === 0) return out;
  const walk = page.before ? 'desc' : 'asc';
  const cursor = page.after ?? page.before;
  const past = cursor ? pastCursor(ORDER, walk, cursor) : sql<boolean>`true`;
  const rows =
    conversationIds.length === 1
      ? await db
          .selectFrom('conversation_member')
          .select(['conversationId', 'accountId', 'joinedAt'])
          .where('conversationId', '=', conversationIds[0]!)
          .where('state', '=', 'member')
          .where(past)
          .orderBy('joinedAt', walk)
          .orderBy('accountId', walk)
          .limit(page.limit)
          .execute()
      : await windowedMemberRows(db, conversationIds, page.limit, walk, past);
  for (const r of rows) {
    const row = {
      conversationId: r.conversationId,
      accountId: r.accountId,
      joinedAt: Number(r.joinedAt),
    };
    const list = out.get(r.conversationId);
    if (list) list.push(row);
    else out.set(r.conversationId, [row]);
  }
  // Walked backwards for `before`: put each page back in the list's order.
  for (const [id, list] of out) out.set(id, keysetRows(list, page));
  return out;
}

/** The first `limit` members of each conversation past `past`, numbered per conversation. */
function windowedMemberRows(
  db: Executor,
  conversationIds: readonly string[],
  limit: number,
  walk: 'asc' | 'desc',
  past: RawBuilder<boolean>,
) {
  const dir = sql.raw(walk);
  return db
    .selectFrom((eb) =>
      eb
        .selectFrom('conversation_member')
        .select(['conversationId', 'accountId', 'joinedAt'])
        .select(
          sql<number>`row_number() over (partition by "conversationId" order by "joinedAt" ${dir}, "accountId" ${dir})`.as(
            'rn',
          ),
        )
        .where('conversationId', 'in', conversationIds)
        .where('state', '=', 'member')
        .where(past)
        .as('m'),
    )
    .selectAll('m')
    .where('m.rn', '<=', limit)
    .orderBy('m.conversationId')
    .orderBy('m.rn')
    .execute();
}

/** How many members (not pending invitees) each conversation has. */
export async function memberCounts(
  db: Executor,
  conversationIds: readonly string[],
): Promise<Map<string, number>> {
  if (conversationIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('conversation_member')
    .select(['conversationId', (eb) => eb.fn.countAll<number>().as('n')])
    .where('conversationId', 'in', conversationIds)
    .where('state', '=', 'member')
    .groupBy('conversationId')
    .execute();
  return new Map(rows.map((r) => [r.conversationId, Number(r.n)]));
}

/**
 * The rows an account holds in each conversation: its membership, or a live invitation
 * (`pending`, not lapsed). What the caller's standing is read from.
 */
export function ownMemberRows(
  db: Executor,
  accountId: string,
  conversationIds: readonly string[],
  now: number,
) {
  return standingRows(db, conversationIds, now, { accountId });
}

/**
 * The live invitations of each conversation (encrypted ones only have them; each account holds
 * at most the operator's cap of them), in the order they were sent.
 */
export function pendingInvitees(db: Executor, conversationIds: readonly string[], now: number) {
  return standingRows(db, conversationIds, now, { pendingOnly: true });
}

/**
 * The rows of each conversation that stand: memberships and invitations not lapsed, in the order
 * they were made. `accountId` keeps one account's rows, `pendingOnly` the invitations alone.
 */
async function standingRows(
  db: Executor,
  conversationIds: readonly string[],
  now: number,
  only: { accountId?: string; pendingOnly?: boolean },
) {
  if (conversationIds.length === 0) return [];
  let q = db
    .selectFrom('conversation_member')
    .select(['conversationId', 'accountId', 'state'])
    .where('conversationId', 'in', conversationIds)
    .where((eb) => {
      const live = eb('joinedAt', '>', now - INVITE_TTL_MS);
      return only.pendingOnly
        ? eb.and([eb('state', '=', 'pending'), live])
        : eb.or([eb('state', '=', 'member'), live]);
    });
  if (only.accountId !== undefined) q = q.where('accountId', '=', only.accountId);
  return q.orderBy('joinedAt').orderBy('accountId').execute();
}
