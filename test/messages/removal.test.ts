import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { userTopic, workspaceTopic } from '../../src/events/catalog.js';
import type { BusEvent } from '../../src/events/bus.js';
import { ManualClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import {
  seedConversation,
  seedMember,
  seedMessage,
  seedWorkspace,
} from '../moderation/_helpers.js';

// The one removal path (src/services/messages/removal.ts): a person's delete, a cascading
// principal block and the account purge remove a message the same way, announce it the same
// way, and run the same hooks inside their transaction.

const DELETE = 'mutation($m: ID!) { deleteMessage(messageId: $m) { id isDeleted } }';
const BLOCK = `mutation($p: String!) {
  instanceBlockPrincipal(principalId: $p, cascade: true) { messagesRemoved } }`;
const REQUEST = `mutation($c: String!) { requestAccountDeletion(input: { confirmUsername: $c }) { scheduledFor } }`;

const DAY_MS = 86_400_000;

describe('removing messages', () => {
  let t: TestApp;
  let op: Agent;
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const hookCalls: Array<{ ids: string[]; by: string; inTransaction: boolean }> = [];
  let failHook = false;

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { SVC_OPEN_REGISTRATION: 'true' } });
    op = await signUpAndIn(t, { operator: true });
    t.ctx.services.messages.removal.onRemove(async (tx, removal) => {
      // The hook sees the tombstoned rows through the removing transaction.
      const rows = await tx.db
        .selectFrom('message')
        .select(['id', 'deletedAt'])
        .where(
          'id',
          'in',
          removal.messages.map((m) => m.id),
        )
        .execute();
      hookCalls.push({
        ids: removal.messages.map((m) => m.id).sort(),
        by: removal.by,
        inTransaction: rows.length === removal.messages.length && rows.every((r) => r.deletedAt),
      });
      if (failHook) throw new Error('hook refused');
    });
  });
  afterAll(async () => t?.close());

  /** A message with everything that shows its content: an edit, a reaction, a pin, ciphertext. */
  async function decorated(conversationId: string, author: Agent, reactor: Agent) {
    const id = await seedMessage(t, conversationId, author, `hello @${reactor.username}`);
    const now = clock.now().getTime();
    const db = t.ctx.db.kysely;
    await db
      .updateTable('message')
      .set({ ciphertext: 'c2VjcmV0', mentions: JSON.stringify({ userIds: [reactor.id] }) })
      .where('id', '=', id)
      .execute();
    await db
      .insertInto('message_edit')
      .values({
        id: newId(),
        messageId: id,
        previousText: 'hi',
        editedAt: now,
        editorId: author.id,
      })
      .execute();
    await db
      .insertInto('reaction')
      .values({ messageId: id, accountId: reactor.id, emoji: '👍', createdAt: now })
      .execute();
    await db
      .insertInto('pin')
      .values({ conversationId, messageId: id, pinnedBy: reactor.id, pinnedAt: now })
      .execute();
    return id;
  }

  async function expectRemoved(id: string, by: string) {
    const db = t.ctx.db.kysely;
    const row = await db.selectFrom('message').selectAll().where('id', '=', id).executeTakeFirst();
    if (row) {
      expect(row).toMatchObject({ text: null, ciphertext: null, mentions: null, deletedBy: by });
      expect(row.deletedAt).not.toBeNull();
    }
    for (const table of ['message_edit', 'reaction', 'pin'] as const) {
      const left = await db
        .selectFrom(table)
        .select('messageId')
        .where('messageId', '=', id)
        .execute();
      expect(left, table).toHaveLength(0);
    }
  }

  function listen(topic: string) {
    const events: BusEvent[] = [];
    const off = t.ctx.bus.subscribe(topic, (e) => events.push(e));
    return { events, off };
  }

  it('a person deleting their message clears text, ciphertext, history, reactions and pins', async () => {
    const author = await signUpAndIn(t);
    const other = await signUpAndIn(t);
    const ws = await seedWorkspace(t, author);
    await seedMember(t, ws.id, other, 'member', [ws.channelId]);
    const id = await decorated(ws.channelId, author, other);
    const bus = listen(workspaceTopic(ws.id));
    hookCalls.length = 0;

    const res = await t.gql(DELETE, { m: id }, author);
    expect(res.body.errors).toBeUndefined();
    await expectRemoved(id, author.id);
    expect(hookCalls).toEqual([{ ids: [id], by: author.id, inTransaction: true }]);
    await new Promise((r) => setTimeout(r, 20));
    bus.off();
    const deleted = bus.events.filter((e) => e.type === 'MessageDeleted');
    expect(deleted).toHaveLength(1);
    expect(deleted[0]?.payload).toMatchObject({ messageId: id, deletedBy: author.id });

    // Deleting again changes nothing and runs no hook.
    hookCalls.length = 0;
    expect((await t.gql(DELETE, { m: id }, author)).body.errors).toBeUndefined();
    expect(hookCalls).toEqual([]);
  });

  it('a cascading block removes the same way and announces a direct message to its members', async () => {
    const spammer = await signUpAndIn(t);
    const friend = await signUpAndIn(t);
    const dm = await seedConversation(t, { kind: 'direct', members: [spammer, friend] });
    const id = await decorated(dm, spammer, friend);
    const bus = listen(userTopic(friend.id));
    hookCalls.length = 0;

    const res = await t.gql(BLOCK, { p: `user:${spammer.id}` }, op);
    expect(res.body.data?.instanceBlockPrincipal.messagesRemoved).toBe(1);
    await expectRemoved(id, op.id);
    expect(hookCalls).toEqual([{ ids: [id], by: op.id, inTransaction: true }]);
    await new Promise((r) => setTimeout(r, 20));
    bus.off();
    // Direct conversations are heard on their members' user topics, like a person's delete.
    const deleted = bus.events.filter((e) => e.type === 'MessageDeleted');
    expect(deleted).toHaveLength(1);
    expect(deleted[0]?.payload).toMatchObject({
      messageId: id,
      conversationId: dm,
      deletedBy: op.id,
    });
  });

  it('the purge keeps a replied-to message as a shell without reactions or pin, erases the rest', async () => {
    const doomed = await signUpAndIn(t);
    const friend = await signUpAndIn(t);
    const ws = await seedWorkspace(t, friend);
    await seedMember(t, ws.id, doomed, 'member', [ws.channelId]);
    const root = await decorated(ws.channelId, doomed, friend);
    const lonely = await seedMessage(t, ws.channelId, doomed, 'nobody answered');
    const reply = await seedMessage(t, ws.channelId, friend, 'an answer');
    await t.ctx.db.kysely
      .updateTable('message')
      .set({ threadRootId: root })
      .where('id', '=', reply)
      .execute();
    // Plaintext only: the purge's set. (The decorated root's ciphertext column is cleared
    // here so it counts as plaintext, as every message sent today is.)
    await t.ctx.db.kysely
      .updateTable('message')
      .set({ ciphertext: null })
      .where('id', '=', root)
      .execute();
    expect((await t.gql(REQUEST, { c: doomed.username }, doomed)).body.errors).toBeUndefined();
    clock.advance(15 * DAY_MS);
    hookCalls.length = 0;
    expect(await t.ctx.scheduler.runOnce('account-purge')).toBe(true);

    await expectRemoved(root, doomed.id);
    const db = t.ctx.db.kysely;
    expect(
      await db.selectFrom('message').select('id').where('id', '=', root).execute(),
    ).toHaveLength(1);
    expect(
      await db.selectFrom('message').select('id').where('id', '=', lonely).execute(),
    ).toHaveLength(0);
    expect(hookCalls).toEqual([{ ids: [root, lonely].sort(), by: doomed.id, inTransaction: true }]);
  });

  it('a hook that fails rolls the removal back', async () => {
    const author = await signUpAndIn(t);
    const ws = await seedWorkspace(t, author);
    const id = await seedMessage(t, ws.channelId, author, 'still here');
    failHook = true;
    try {
      const res = await t.gql(DELETE, { m: id }, author);
      expect(res.body.errors?.[0]?.extensions?.code).toBe('INTERNAL');
    } finally {
      failHook = false;
    }
    const row = await t.ctx.db.kysely
      .selectFrom('message')
      .select(['text', 'deletedAt'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ text: 'still here', deletedAt: null });
  });
});
