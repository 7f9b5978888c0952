import { newId } from '../../src/lib/ids.js';
import type { TestApp } from '../_util/app.js';

// Rows written straight into the collaboration tables, so these tests depend only on the schema
// and not on how the workspace and message areas create them.

export async function workspace(t: TestApp, ownerId: string, name = `ws-${newId().slice(-6)}`) {
  const id = newId();
  const now = t.ctx.clock.now().getTime();
  await t.ctx.db.kysely
    .insertInto('workspace')
    .values({ id, name, description: null, ownerId, isDirect: 0, createdAt: now, updatedAt: now })
    .execute();
  await member(t, id, ownerId, 'owner');
  return id;
}

export async function member(
  t: TestApp,
  workspaceId: string,
  accountId: string,
  role: 'owner' | 'moderator' | 'member' | 'guest' = 'member',
) {
  t.ctx.clock.now();
  await t.ctx.db.kysely
    .insertInto('workspace_member')
    .values({
      workspaceId,
      accountId,
      role,
      joinedAt: t.ctx.clock.now().getTime(),
      timedOutUntil: null,
    })
    .execute();
}

export async function channel(t: TestApp, workspaceId: string, createdBy: string) {
  const id = newId();
  const now = t.ctx.clock.now().getTime();
  await t.ctx.db.kysely
    .insertInto('conversation')
    .values({
      id,
      workspaceId,
      kind: 'channel',
      name: 'general',
      topic: null,
      isPrivate: 0,
      encrypted: 0,
      archivedAt: null,
      createdBy,
      createdAt: now,
      lastActivityAt: now,
    })
    .execute();
  return id;
}

let tick = 0;

export async function message(
  t: TestApp,
  conversationId: string,
  workspaceId: string,
  authorId: string,
  opts: { text?: string | null; ciphertext?: string | null; threadRootId?: string | null } = {},
) {
  const id = newId();
  await t.ctx.db.kysely
    .insertInto('message')
    .values({
      id,
      conversationId,
      workspaceId,
      authorId,
      text: opts.ciphertext ? null : (opts.text ?? 'hello'),
      ciphertext: opts.ciphertext ?? null,
      threadRootId: opts.threadRootId ?? null,
      forwardedFromId: null,
      createdAt: t.ctx.clock.now().getTime() + tick++,
      editedAt: null,
      deletedAt: null,
      deletedBy: null,
      replyCount: 0,
      lastReplyAt: null,
      mentions: null,
    })
    .execute();
  if (opts.threadRootId) {
    await t.ctx.db.kysely
      .updateTable('message')
      .set((eb) => ({ replyCount: eb('replyCount', '+', 1) }))
      .where('id', '=', opts.threadRootId)
      .execute();
  }
  return id;
}

export async function accountRow(t: TestApp, id: string) {
  return t.ctx.db.kysely
    .selectFrom('account')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}
