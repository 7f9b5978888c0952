import type { Executor } from '../../db/database.js';

import { isLanguageCode } from './languages.js';

// What the query grammar's operators name, looked up for one searcher (query-grammar.ts), and
// the languages short texts fall back to (docs/search.md, "Languages").

/** The live account with this username key, if any. */
export async function accountByUsernameKey(db: Executor, key: string) {
  return db
    .selectFrom('account')
    .select('id')
    .where('usernameKey', '=', key)
    .where('deletedAt', 'is', null)
    .executeTakeFirst();
}

/**
 * Channels named `name` that `accountId` can see in the workspaces they belong to (only
 * `workspaceId` when given): those they are a member of, and public ones unless a guest.
 */
export async function channelsNamed(
  db: Executor,
  accountId: string,
  name: string,
  workspaceId: string | null | undefined,
) {
  let q = db
    .selectFrom('conversation as c')
    .innerJoin('workspace_member as wm', (j) =>
      j.onRef('wm.workspaceId', '=', 'c.workspaceId').on('wm.accountId', '=', accountId),
    )
    .leftJoin('conversation_member as cm', (j) =>
      j
        .onRef('cm.conversationId', '=', 'c.id')
        .on('cm.accountId', '=', accountId)
        .on('cm.state', '=', 'member'),
    )
    .select('c.id')
    .where('c.kind', '=', 'channel')
    .where('c.name', '=', name)
    // Only channels the searcher can see, so a private channel's name is never confirmed.
    .where((eb) =>
      eb.or([
        eb('cm.accountId', 'is not', null),
        eb.and([eb('c.isPrivate', '=', 0), eb('wm.role', '<>', 'guest')]),
      ]),
    );
  if (workspaceId) q = q.where('c.workspaceId', '=', workspaceId);
  return (await q.execute()).map((r) => r.id);
}

/** The plaintext direct conversation of two accounts, if they have one. */
export async function directConversation(db: Executor, a: string, b: string) {
  const key = a < b ? `${a}:${b}:p` : `${b}:${a}:p`;
  const row = await db
    .selectFrom('direct_pair')
    .select('conversationId')
    .where('pairKey', '=', key)
    .executeTakeFirst();
  return row?.conversationId ?? null;
}

/** The language chosen for an account's or a workspace's short texts, if any. */
export async function searchLanguage(db: Executor, id: string) {
  const row = await db
    .selectFrom('search_language')
    .select('language')
    .where('id', '=', id)
    .executeTakeFirst();
  return row && isLanguageCode(row.language) ? row.language : null;
}

/** The fallback language of a message: its author's, else its workspace's. */
export async function fallbackLanguage(db: Executor, authorId: string, workspaceId: string) {
  const rows = await db
    .selectFrom('search_language')
    .select(['id', 'language'])
    .where('id', 'in', [authorId, workspaceId])
    .execute();
  const of = (id: string) => rows.find((r) => r.id === id)?.language ?? null;
  return of(authorId) ?? of(workspaceId);
}
