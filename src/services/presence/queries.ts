import { sql } from 'kysely';

import type { Executor } from '../../db/database.js';
import { preparedQuery } from '../../db/statements/prepared.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';

// Presence and typing queries, executor first.

export async function findPresenceChoices(db: Executor, accountIds: readonly string[]) {
  if (accountIds.length === 0) return [];
  // One account (a sign-in, a socket's upgrade): a prepared statement.
  if (accountIds.length === 1) return (await presenceChoiceQuery(db, accountIds[0]!)).rows;
  return db
    .selectFrom('presence_setting')
    .select(['accountId', 'choice'])
    .where('accountId', 'in', accountIds)
    .execute();
}

const presenceChoiceQuery = preparedQuery(1, (db, accountId: string) =>
  db
    .selectFrom('presence_setting')
    .select(['accountId', 'choice'])
    .where('accountId', '=', accountId),
);

export async function upsertPresenceChoice(
  db: Executor,
  row: { accountId: string; choice: string; updatedAt: number },
) {
  await db
    .insertInto('presence_setting')
    .values(row)
    .onConflict((oc) =>
      oc.column('accountId').doUpdateSet({ choice: row.choice, updatedAt: row.updatedAt }),
    )
    .execute();
}

/** The workspaces (not the direct space) the account is in, as rows `('w', id)`. */
const workspacesOf = (db: Executor, accountId: string) =>
  db
    .selectFrom('workspace_member')
    .select([sql<string>`'w'`.as('kind'), 'workspaceId as id'])
    .where('accountId', '=', accountId)
    .where('workspaceId', '!=', DIRECT_SPACE_ID);

/** The members of its direct and group conversations but itself, as rows `('p', id)`. */
const partnersOf = (db: Executor, accountId: string) =>
  db
    .selectFrom('conversation_member as me')
    .innerJoin('conversation as c', 'c.id', 'me.conversationId')
    .innerJoin('conversation_member as o', 'o.conversationId', 'me.conversationId')
    .select([sql<string>`'p'`.as('kind'), 'o.accountId as id'])
    .where('me.accountId', '=', accountId)
    .where('me.state', '=', 'member')
    .where('c.workspaceId', '=', DIRECT_SPACE_ID)
    .where('o.accountId', '!=', accountId)
    .where('o.state', '=', 'member');

const presenceAudienceQuery = preparedQuery(1, (db, accountId: string) =>
  workspacesOf(db, accountId).unionAll(partnersOf(db, accountId)),
);

/** The audience's rows and the account's choice, as a row `('c', choice)` when it made one. */
const presenceArrivalQuery = preparedQuery(1, (db, accountId: string) =>
  db
    .selectFrom('presence_setting')
    .select([sql<string>`'c'`.as('kind'), 'choice as id'])
    .where('accountId', '=', accountId)
    .unionAll(workspacesOf(db, accountId))
    .unionAll(partnersOf(db, accountId)),
);

export interface PresenceAudience {
  workspaceIds: string[];
  partners: string[];
}

function toAudience(rows: ReadonlyArray<{ kind: string; id: string }>): PresenceAudience {
  const workspaceIds: string[] = [];
  const partners = new Set<string>();
  for (const row of rows) {
    if (row.kind === 'w') workspaceIds.push(row.id);
    else if (row.kind === 'p') partners.add(row.id);
  }
  return { workspaceIds, partners: [...partners] };
}

/**
 * Who hears of the account's presence, in one statement: the workspaces (not the direct space) it
 * is a member of, and the people it shares a direct or group conversation with (members, not
 * invitees).
 */
export async function findPresenceAudience(
  db: Executor,
  accountId: string,
): Promise<PresenceAudience> {
  return toAudience((await presenceAudienceQuery(db, accountId)).rows);
}

/**
 * What an account's first connection needs, in one statement: its presence choice (null: it
 * made none) and its audience (`findPresenceAudience`).
 */
export async function findPresenceArrival(
  db: Executor,
  accountId: string,
): Promise<{ choice: string | null; audience: PresenceAudience }> {
  const { rows } = await presenceArrivalQuery(db, accountId);
  return { choice: rows.find((r) => r.kind === 'c')?.id ?? null, audience: toAudience(rows) };
}

/** Whether either of two accounts blocks the other. */
export async function eitherBlocks(db: Executor, a: string, b: string): Promise<boolean> {
  const row = await db
    .selectFrom('user_block')
    .select('blockerId')
    .where((eb) =>
      eb.or([
        eb.and([eb('blockerId', '=', a), eb('blockedId', '=', b)]),
        eb.and([eb('blockerId', '=', b), eb('blockedId', '=', a)]),
      ]),
    )
    .executeTakeFirst();
  return row !== undefined;
}

export async function findAccountNames(db: Executor, accountId: string) {
  return db
    .selectFrom('account')
    .select(['id', 'username', 'displayName'])
    .where('id', '=', accountId)
    .executeTakeFirst();
}
