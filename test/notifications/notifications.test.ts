import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import type { MessageTable } from '../../src/db/tables/messages.js';
import { DAY_MS, HOUR_MS, ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import {
  conversationOf,
  createWorkspace,
  expectCode,
  giveDevice,
  inviteAndJoin,
  ok,
  recordUser,
  send,
  setRole,
} from '../conversations/_helpers.js';

import {
  counts,
  feed,
  generalOf,
  SET_RULE,
  settle,
  SETTINGS_FIELDS,
  UPDATE_SETTINGS,
} from './_helpers.js';

const clock = new ManualClock(new Date('2026-03-02T09:00:00Z'));
let t: TestApp;
// owner, moderator, members
let olga: Agent, mona: Agent, mike: Agent, mary: Agent, pat: Agent;
let serverId: string, general: string;

const tick = () => clock.advance(1);
const setRule = (agent: Agent, input: Record<string, unknown>) =>
  t.gql(SET_RULE, { i: input }, agent);
const updateSettings = (agent: Agent, input: Record<string, unknown>) =>
  t.gql(UPDATE_SETTINGS, { i: input }, agent);
const kinds = async (agent: Agent, messageId: string) =>
  (await feed(t, agent)).items.filter((i) => i.messageId === messageId).map((i) => i.kind);

beforeAll(async () => {
  t = await createTestApp({ clock });
  [olga, mona, mike, mary, pat] = await Promise.all(
    ['olga', 'mona', 'mike', 'mary', 'pat'].map((u) => signUpAndIn(t, { username: `${u}ntf` })),
  );
  serverId = (await createWorkspace(t, olga, 'Notify')).id;
  await inviteAndJoin(t, olga, serverId, [mona, mike, mary, pat]);
  ok(await setRole(t, olga, serverId, mona.id, 'MODERATOR'));
  general = await generalOf(t, olga, serverId);
});
afterAll(async () => {
  await t?.close();
});

describe('mentions', () => {
  it('@username notifies the person named, once, live, and the mention is on the message', async () => {
    const live = recordUser(t, mike.id);
    tick();
    const m = await send(t, olga, general, 'hello @mikentf and @mikentf again');
    expect(m.mentions).toMatchObject({ userIds: [mike.id], here: false });
    const items = (await feed(t, mike)).items.filter((i) => i.messageId === m.id);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      kind: 'MENTION',
      conversationId: general,
      read: false,
      encrypted: false,
      message: { id: m.id, text: 'hello @mikentf and @mikentf again' },
    });
    const created = live.ofType('NotificationCreated');
    expect(created).toHaveLength(1);
    expect(created[0]!.payload).toMatchObject({
      audience: { kind: 'users', userIds: [mike.id] },
      notification: { id: items[0]!.id, kind: 'MENTION', messageId: m.id, actorId: olga.id },
    });
    // No text in the event: it is metadata, read through the message with the reader's access.
    expect(JSON.stringify(created[0]!.payload)).not.toContain('again');
    live.stop();
    // The author and people not named are not notified.
    expect(await kinds(olga, m.id)).toEqual([]);
    expect(await kinds(mary, m.id)).toEqual([]);
  });

  it('@channel and @everyone notify every member of the channel but the author', async () => {
    tick();
    const m = await send(t, mike, general, 'lunch @channel?');
    expect(m.mentions).toMatchObject({ here: false });
    const shown = ok(
      await t.gql(
        'query($c: ID!) { conversation(id: $c) { lastMessage { mentions { channel } } } }',
        {
          c: general,
        },
        mike,
      ),
    );
    expect(shown.conversation.lastMessage.mentions.channel).toBe(true);
    for (const a of [olga, mona, mary, pat]) expect(await kinds(a, m.id)).toEqual(['CHANNEL']);
    expect(await kinds(mike, m.id)).toEqual([]);
    tick();
    const e = await send(t, mike, general, '@everyone look');
    expect(await kinds(pat, e.id)).toEqual(['CHANNEL']);
  });

  it('a name beats @channel: one notification, of the strongest kind', async () => {
    tick();
    const m = await send(t, olga, general, '@channel and especially @maryntf');
    expect(await kinds(mary, m.id)).toEqual(['MENTION']);
    expect(await kinds(pat, m.id)).toEqual(['CHANNEL']);
  });

  it('@here notifies only members shown online', async () => {
    t.ctx.services.presence.connected(pat.id);
    // The status is announced to the presence store after the call returns.
    for (let i = 0; i < 200; i++) {
      if ((await t.ctx.services.presence.onlineAmong([pat.id])).has(pat.id)) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    tick();
    const m = await send(t, olga, general, 'anyone @here?');
    expect(await kinds(pat, m.id)).toEqual(['CHANNEL']);
    expect(await kinds(mary, m.id)).toEqual([]);
    t.ctx.services.presence.disconnected(pat.id);
  });

  it('follows the workspace policy for @channel; only staff change it', async () => {
    const SET = `mutation($s: ID!, $p: ChannelMentionPolicy!) { setChannelMentionPolicy(serverId: $s, policy: $p) }`;
    expectCode(await t.gql(SET, { s: serverId, p: 'MODERATORS' }, mike), 'FORBIDDEN');
    expectCode(await t.gql(SET, { s: DIRECT_SPACE_ID, p: 'NOBODY' }, olga), 'VALIDATION');
    expect(ok(await t.gql(SET, { s: serverId, p: 'MODERATORS' }, mona))).toEqual({
      setChannelMentionPolicy: 'MODERATORS',
    });
    const ws = ok(
      await t.gql(
        'query($s: ID!) { workspace(serverId: $s) { channelMentions } }',
        { s: serverId },
        mike,
      ),
    );
    expect(ws.workspace.channelMentions).toBe('MODERATORS');
    tick();
    const byMember = await send(t, mike, general, '@channel from a member');
    tick();
    const byMod = await send(t, mona, general, '@channel from a moderator');
    expect(await kinds(pat, byMember.id)).toEqual([]);
    expect(await kinds(pat, byMod.id)).toEqual(['CHANNEL']);
    ok(await t.gql(SET, { s: serverId, p: 'NOBODY' }, olga));
    tick();
    const byOwner = await send(t, olga, general, '@channel from the owner');
    expect(await kinds(pat, byOwner.id)).toEqual([]);
    ok(await t.gql(SET, { s: serverId, p: 'EVERYONE' }, olga));
  });

  it('replies in a thread notify the people who took part in it', async () => {
    tick();
    const root = await send(t, mary, general, 'a question');
    tick();
    await send(t, pat, general, 'an answer', root.id);
    tick();
    const reply = await send(t, mike, general, 'another answer', root.id);
    expect(await kinds(mary, reply.id)).toEqual(['THREAD_REPLY']);
    expect(await kinds(pat, reply.id)).toEqual(['THREAD_REPLY']);
    expect(await kinds(olga, reply.id)).toEqual([]);
    const item = (await feed(t, mary)).items.find((i) => i.messageId === reply.id)!;
    expect(item.threadRootId).toBe(root.id);
  });

  it('every message of a direct or group conversation notifies its other members', async () => {
    const dm = (await conversationOf(t, olga, [pat])).conversation;
    tick();
    const m = await send(t, olga, dm.id, 'hi pat');
    expect(await kinds(pat, m.id)).toEqual(['DIRECT']);
    const group = (await conversationOf(t, mike, [mary, pat], { name: 'trio' })).conversation;
    tick();
    const g = await send(t, mike, group.id, 'hi both');
    expect(await kinds(mary, g.id)).toEqual(['DIRECT']);
    expect(await kinds(pat, g.id)).toEqual(['DIRECT']);
  });
});

describe('blocks', () => {
  it('nobody is notified of a message by someone they blocked', async () => {
    const BLOCK = 'mutation($u: ID!) { blockUser(userId: $u) }';
    ok(await t.gql(BLOCK, { u: olga.id }, pat));
    tick();
    const m = await send(t, olga, general, '@patntf and @maryntf');
    expect(await kinds(pat, m.id)).toEqual([]);
    expect(await kinds(mary, m.id)).toEqual(['MENTION']);
    ok(await t.gql('mutation($u: ID!) { unblockUser(userId: $u) }', { u: olga.id }, pat));
  });
});

describe('rules', () => {
  it('a channel notifies nothing but mentions by default; ALL notifies every message', async () => {
    tick();
    const quiet = await send(t, olga, general, 'plain message');
    expect(await kinds(mary, quiet.id)).toEqual([]);
    ok(await updateSettings(mary, { level: 'ALL' }));
    tick();
    const m = await send(t, olga, general, 'another plain message');
    expect(await kinds(mary, m.id)).toEqual(['MESSAGE']);
    expect(await kinds(pat, m.id)).toEqual([]);
    ok(await updateSettings(mary, { level: 'MENTIONS' }));
  });

  it('a workspace rule sets its channels; a conversation rule wins over it', async () => {
    const rule = ok(await setRule(pat, { serverId, level: 'ALL' })).setNotificationRule;
    expect(rule).toEqual({ serverId, conversationId: null, level: 'ALL', mutedUntil: null });
    tick();
    const m = await send(t, olga, general, 'for the workspace rule');
    expect(await kinds(pat, m.id)).toEqual(['MESSAGE']);
    ok(await setRule(pat, { conversationId: general, level: 'NOTHING' }));
    tick();
    const n = await send(t, olga, general, '@patntf not even a mention');
    expect(await kinds(pat, n.id)).toEqual([]);
    expect((await counts(t, pat, general)).notificationRule).toEqual({
      level: 'NOTHING',
      mutedUntil: null,
    });
    // No level and no mute removes a rule.
    expect(ok(await setRule(pat, { conversationId: general })).setNotificationRule).toBeNull();
    expect(ok(await setRule(pat, { serverId })).setNotificationRule).toBeNull();
    expect((await counts(t, pat, general)).notificationRule).toBeNull();
  });

  it('mute holds until its time, then the level applies again', async () => {
    const until = new Date(clock.now().getTime() + HOUR_MS).toISOString();
    ok(await setRule(mike, { conversationId: general, mutedUntil: until }));
    tick();
    const muted = await send(t, olga, general, '@mikentf while muted');
    expect(await kinds(mike, muted.id)).toEqual([]);
    clock.advance(HOUR_MS + 1);
    const back = await send(t, olga, general, '@mikentf after the mute');
    expect(await kinds(mike, back.id)).toEqual(['MENTION']);
    ok(await setRule(mike, { conversationId: general }));
  });

  it('a direct conversation follows its own rule, and a default of NOTHING silences it', async () => {
    const dm = (await conversationOf(t, mona, [mary])).conversation;
    ok(await setRule(mary, { conversationId: dm.id, level: 'MENTIONS' }));
    tick();
    const plain = await send(t, mona, dm.id, 'no mention');
    tick();
    const named = await send(t, mona, dm.id, 'hey @maryntf');
    expect(await kinds(mary, plain.id)).toEqual([]);
    expect(await kinds(mary, named.id)).toEqual(['MENTION']);
    ok(await setRule(mary, { conversationId: dm.id }));
    ok(await updateSettings(mary, { level: 'NOTHING' }));
    tick();
    const silenced = await send(t, mona, dm.id, 'silenced @maryntf');
    expect(await kinds(mary, silenced.id)).toEqual([]);
    ok(await updateSettings(mary, { level: 'MENTIONS' }));
  });

  it('keywords notify as whole words in any case', async () => {
    const s = ok(await updateSettings(mike, { keywords: ['Deploy', ' deploy ', 'db-migration'] }));
    expect(s.updateNotificationSettings.keywords).toEqual(['deploy', 'db-migration']);
    tick();
    const hit = await send(t, olga, general, 'the DEPLOY is done');
    tick();
    const miss = await send(t, olga, general, 'redeployment tomorrow');
    tick();
    const dashed = await send(t, olga, general, 'see db-migration.');
    expect(await kinds(mike, hit.id)).toEqual(['KEYWORD']);
    expect(await kinds(mike, miss.id)).toEqual([]);
    expect(await kinds(mike, dashed.id)).toEqual(['KEYWORD']);
    ok(await updateSettings(mike, { keywords: [] }));
  });

  it('quiet hours and do-not-disturb are read in the person’s time zone', async () => {
    // 09:00 UTC is 18:00 in Tokyo.
    const s = ok(
      await updateSettings(pat, {
        timeZone: 'Asia/Tokyo',
        quietHoursStart: '17:30',
        quietHoursEnd: '07:00',
      }),
    ).updateNotificationSettings;
    expect(s).toMatchObject({
      timeZone: 'Asia/Tokyo',
      quietHoursStart: '17:30',
      quietHoursEnd: '07:00',
      doNotDisturbNow: true,
    });
    ok(await updateSettings(pat, { timeZone: 'Europe/Paris' }));
    const read = ok(await t.gql(`{ notificationSettings { ${SETTINGS_FIELDS} } }`, {}, pat));
    expect(read.notificationSettings.doNotDisturbNow).toBe(false);
    const until = new Date(clock.now().getTime() + MINUTE_MS).toISOString();
    const dnd = ok(await updateSettings(pat, { doNotDisturbUntil: until }));
    expect(dnd.updateNotificationSettings.doNotDisturbNow).toBe(true);
    ok(
      await updateSettings(pat, {
        doNotDisturbUntil: null,
        quietHoursStart: null,
        quietHoursEnd: null,
      }),
    );
  });

  it('refuses bad input with a message that says what to send', async () => {
    const e1 = expectCode(await updateSettings(pat, { timeZone: 'Mars/Base' }), 'VALIDATION');
    expect(e1.message).toContain('IANA');
    expectCode(
      await updateSettings(pat, { quietHoursStart: '25:00', quietHoursEnd: '07:00' }),
      'VALIDATION',
    );
    expectCode(await updateSettings(pat, { quietHoursStart: '22:00' }), 'VALIDATION');
    const many = Array.from({ length: 26 }, (_, i) => `word${i}`);
    expectCode(await updateSettings(pat, { keywords: many }), 'VALIDATION');
    expectCode(
      await setRule(pat, { serverId, conversationId: general, level: 'ALL' }),
      'VALIDATION',
    );
    expectCode(await setRule(pat, { level: 'ALL' }), 'VALIDATION');
    expectCode(await setRule(pat, { serverId: DIRECT_SPACE_ID, level: 'ALL' }), 'VALIDATION');
    expectCode(await setRule(pat, { serverId: newId(), level: 'ALL' }), 'NOT_FOUND');
    expectCode(await setRule(pat, { conversationId: newId(), level: 'ALL' }), 'NOT_FOUND');
  });
});

describe('the feed', () => {
  it('pages newest first and its counts agree with the conversation', async () => {
    const reader = await signUpAndIn(t, { username: 'readerntf' });
    await inviteAndJoin(t, olga, serverId, [reader]);
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) {
      tick();
      sent.push((await send(t, olga, general, `@readerntf number ${i}`)).id);
    }
    const first = await feed(t, reader, { limit: 2 });
    expect(first.items.map((i) => i.messageId)).toEqual([sent[4], sent[3]]);
    expect(first.hasMore).toBe(true);
    expect(first.unreadCount).toBe(5);
    const second = await feed(t, reader, { limit: 2, after: first.nextCursor });
    expect(second.items.map((i) => i.messageId)).toEqual([sent[2], sent[1]]);
    const third = await feed(t, reader, { limit: 2, after: second.nextCursor });
    expect(third.items.map((i) => i.messageId)).toEqual([sent[0]]);
    expect(third.hasMore).toBe(false);
    expect(third.nextCursor).toBeNull();
    // Back up the list.
    const back = await feed(t, reader, { limit: 2, before: third.prevCursor });
    expect(back.items.map((i) => i.messageId)).toEqual([sent[2], sent[1]]);
    const top = await feed(t, reader, { limit: 2, before: back.nextCursor });
    expect(top.items.map((i) => i.messageId)).toEqual([sent[4], sent[3]]);
    expect(top.hasMore).toBe(false);

    let c = await counts(t, reader, general);
    expect(c.mentionCount).toBe(5);

    // One read.
    const one = first.items[0]!;
    const MARK = 'mutation($id: ID!) { markNotificationRead(id: $id) { id read } }';
    expect(ok(await t.gql(MARK, { id: one.id }, reader)).markNotificationRead).toEqual({
      id: one.id,
      read: true,
    });
    expectCode(await t.gql(MARK, { id: one.id }, mike), 'NOT_FOUND');
    c = await counts(t, reader, general);
    expect(c.mentionCount).toBe(4);
    expect((await feed(t, reader, { unread: true })).items).toHaveLength(4);

    // Reading the conversation up to the second message reads the notifications up to it.
    ok(
      await t.gql(
        'mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id } }',
        { c: general, m: sent[1] },
        reader,
      ),
    );
    c = await counts(t, reader, general);
    expect(c.mentionCount).toBe(2);
    const unread = await feed(t, reader, { unread: true, c: general });
    expect(unread.items.map((i) => i.messageId)).toEqual([sent[3], sent[2]]);
    expect(unread.unreadCount).toBe(2);

    // Marking the conversation read clears both counts.
    const MARK_CONV = 'mutation($c: ID!) { markConversationNotificationsRead(conversationId: $c) }';
    expect(ok(await t.gql(MARK_CONV, { c: general }, reader))).toEqual({
      markConversationNotificationsRead: 2,
    });
    c = await counts(t, reader, general);
    expect(c).toMatchObject({ unreadCount: 0, mentionCount: 0 });
    expect((await feed(t, reader)).items.every((i) => i.read)).toBe(true);
  });

  it('counts every message of a direct conversation as the feed does', async () => {
    const dm = (await conversationOf(t, mike, [olga])).conversation;
    const dmReader = olga;
    ok(
      await t.gql(
        'mutation($c: ID!) { markConversationNotificationsRead(conversationId: $c) }',
        { c: dm.id },
        dmReader,
      ),
    );
    for (let i = 0; i < 3; i++) {
      tick();
      await send(t, mike, dm.id, `dm ${i}`);
    }
    const c = await counts(t, dmReader, dm.id);
    const listed = await feed(t, dmReader, { unread: true, c: dm.id });
    expect(c.unreadCount).toBe(3);
    expect(c.mentionCount).toBe(3);
    expect(listed.items).toHaveLength(3);
    const ALL = 'mutation { markAllNotificationsRead }';
    const live = recordUser(t, dmReader.id);
    expect(ok(await t.gql(ALL, {}, dmReader)).markAllNotificationsRead).toBeGreaterThanOrEqual(3);
    expect(live.ofType('NotificationsRead').map((e) => e.payload)).toEqual([
      expect.objectContaining({ notificationId: null, all: true }),
    ]);
    live.stop();
    expect((await counts(t, dmReader, dm.id)).mentionCount).toBe(0);
    expect((await feed(t, dmReader)).unreadCount).toBe(0);
  });

  it('drops a deleted message and a conversation the person left', async () => {
    tick();
    const m = await send(t, olga, general, 'soon gone @maryntf');
    expect(await kinds(mary, m.id)).toEqual(['MENTION']);
    ok(
      await t.gql(
        'mutation($id: ID!) { deleteMessage(messageId: $id) { id } }',
        { id: m.id },
        olga,
      ),
    );
    expect(await kinds(mary, m.id)).toEqual([]);
  });
});

describe('encrypted conversations', () => {
  it('notify members by metadata only; a pending invitee gets nothing and no unread count', async () => {
    await giveDevice(t, olga.id);
    await giveDevice(t, mike.id);
    // pat has no device: invited as pending.
    const conv = (await conversationOf(t, olga, [mike, pat], { encrypted: true })).conversation;
    expect(conv.pendingMemberIds).toEqual([pat.id]);
    tick();
    const message: MessageTable = {
      id: newId(),
      conversationId: conv.id,
      workspaceId: DIRECT_SPACE_ID,
      authorId: olga.id,
      text: null,
      ciphertext: 'Y2lwaGVydGV4dCBAbWlrZW50Zg',
      threadRootId: null,
      forwardedFromId: null,
      createdAt: clock.now().getTime(),
      editedAt: null,
      deletedAt: null,
      deletedBy: null,
      replyCount: 0,
      lastReplyAt: null,
      mentions: null,
    };
    await t.ctx.db.kysely.insertInto('message').values(message).execute();
    t.ctx.services.notifications.messageCreated(message);
    await settle(t);
    const items = (await feed(t, mike)).items.filter((i) => i.messageId === message.id);
    expect(items).toEqual([
      expect.objectContaining({
        kind: 'DIRECT',
        encrypted: true,
        message: { id: message.id, text: null },
      }),
    ]);
    expect(await kinds(pat, message.id)).toEqual([]);
    const rows = await t.ctx.db.kysely
      .selectFrom('notification')
      .select('accountId')
      .where('messageId', '=', message.id)
      .execute();
    expect(rows.map((r) => r.accountId)).toEqual([mike.id]);
    const inbox = ok(
      await t.gql(
        '{ inboxConversations { items { id unreadCount mentionCount isMember } } }',
        {},
        pat,
      ),
    ).inboxConversations.items.find((c: { id: string }) => c.id === conv.id);
    expect(inbox).toEqual({ id: conv.id, unreadCount: 0, mentionCount: 0, isMember: false });
  });
});

describe('deletion', () => {
  it('scoped rules and notifications go with their workspace', async () => {
    const other = (await createWorkspace(t, mona, 'Doomed')).id;
    await inviteAndJoin(t, mona, other, [mike]);
    const channel = await generalOf(t, mona, other);
    ok(await setRule(mike, { serverId: other, level: 'ALL' }));
    ok(await setRule(mike, { conversationId: channel, level: 'ALL' }));
    tick();
    await send(t, mona, channel, 'hello @mikentf');
    await settle(t);
    const before = await t.ctx.db.kysely
      .selectFrom('notification_rule')
      .select('scopeId')
      .where('workspaceId', '=', other)
      .execute();
    expect(before).toHaveLength(2);
    ok(
      await t.gql(
        'mutation($i: DeleteWorkspaceInput!) { deleteWorkspace(input: $i) { deleted } }',
        { i: { serverId: other, confirmName: 'Doomed' } },
        mona,
      ),
    );
    for (const table of ['notification_rule', 'notification'] as const) {
      const left = await t.ctx.db.kysely
        .selectFrom(table)
        .select('workspaceId')
        .where('workspaceId', '=', other)
        .execute();
      expect(left, table).toEqual([]);
    }
    // Rules elsewhere stay.
    ok(await setRule(mike, { serverId, level: 'MENTIONS' }));
    expect(
      ok(await t.gql(`{ notificationSettings { rules { serverId level } } }`, {}, mike))
        .notificationSettings.rules,
    ).toEqual([{ serverId, level: 'MENTIONS' }]);
  });

  it('the account purge removes the settings, rules, feed and push subscriptions', async () => {
    const leaving = await signUpAndIn(t, { username: 'leavingntf' });
    await inviteAndJoin(t, olga, serverId, [leaving]);
    ok(await updateSettings(leaving, { level: 'ALL', keywords: ['x'] }));
    ok(await setRule(leaving, { serverId, level: 'ALL' }));
    tick();
    await send(t, olga, general, '@leavingntf hello');
    await settle(t);
    ok(
      await t.gql(
        'mutation($c: String!) { requestAccountDeletion(input: { confirmUsername: $c }) { scheduledFor } }',
        { c: 'leavingntf' },
        leaving,
      ),
    );
    await t.ctx.services.accountDeletion.purgeDue(clock.now().getTime() + 15 * DAY_MS);
    for (const table of [
      'notification_setting',
      'notification_rule',
      'notification',
      'push_subscription',
    ] as const) {
      const left = await t.ctx.db.kysely
        .selectFrom(table)
        .select('accountId')
        .where('accountId', '=', leaving.id)
        .execute();
      expect(left, table).toEqual([]);
    }
  });
});

// Last: it moves the clock past every session's lifetime.
describe('retention', () => {
  it('keeps notifications 90 days', async () => {
    tick();
    const m = await send(t, olga, general, '@maryntf kept for a while');
    expect(await kinds(mary, m.id)).toEqual(['MENTION']);
    const left = async () =>
      (
        await t.ctx.db.kysely
          .selectFrom('notification')
          .select('id')
          .where('messageId', '=', m.id)
          .execute()
      ).length;
    clock.advance(89 * DAY_MS);
    expect(await t.ctx.scheduler.runOnce('notification-retention')).toBe(true);
    expect(await left()).toBe(1);
    clock.advance(DAY_MS + 1);
    await t.ctx.scheduler.runOnce('notification-retention');
    expect(await left()).toBe(0);
  });
});
