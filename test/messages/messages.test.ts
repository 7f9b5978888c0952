import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { userTopic, workspaceTopic } from '../../src/events/catalog.js';
import { ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import {
  conversationOf,
  createWorkspace,
  expectCode,
  inviteAndJoin,
  MESSAGE_FIELDS,
  ok,
  recordEvents,
  recordUser,
  send,
  sendRaw,
  setRole,
} from '../conversations/_helpers.js';

const MESSAGES = `query($c: ID!) { messages(conversationId: $c) { items { ${MESSAGE_FIELDS} } } }`;
const THREAD = `query($m: ID!) { threadReplies(messageId: $m) { items { id text threadRootId } } }`;
const FORWARD = `mutation($m: ID!, $to: ID!) { forwardMessage(messageId: $m, toConversationId: $to) {
  ${MESSAGE_FIELDS} } }`;
const EDIT = `mutation($m: ID!, $text: String!) { editMessage(messageId: $m, text: $text) {
  id text editedAt editHistory { previousText editor { id } } } }`;
const DELETE = `mutation($m: ID!) { deleteMessage(messageId: $m) { id text isDeleted replyCount mentions { userIds } } }`;
const HISTORY = `query($c: ID!) { messages(conversationId: $c) { items { id editHistory { previousText } } } }`;
const REACT = `mutation($m: ID!, $e: String!) { addReaction(messageId: $m, emoji: $e) {
  reactions { emoji count reactedByMe } } }`;
const UNREACT = `mutation($m: ID!, $e: String!) { removeReaction(messageId: $m, emoji: $e) {
  reactions { emoji count reactedByMe } } }`;
const PIN = 'mutation($m: ID!) { pinMessage(messageId: $m) { id pinned } }';
const UNPIN = 'mutation($m: ID!) { unpinMessage(messageId: $m) { id pinned } }';
const PINNED = 'query($c: ID!) { pinnedMessages(conversationId: $c) { id } }';
const CHANNELS = 'query($s: ID!) { channels(serverId: $s) { id name } }';
const CREATE_CHANNEL = `mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }`;

const rows = (data: Record<string, any>) => data.messages.items as Array<Record<string, any>>;

describe('messages', () => {
  const clock = new ManualClock(Date.parse('2030-07-01T00:00:00Z'));
  let t: TestApp;
  // owner, moderator, member, member, guest; outsider in no workspace
  let olga: Agent, mona: Agent, mike: Agent, mary: Agent, gus: Agent, otto: Agent;
  let serverId: string, general: string, random: string, secret: string;

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { SVC_LIMIT_MESSAGE_BYTES: '64' } });
    [olga, mona, mike, mary, gus, otto] = await Promise.all(
      ['olga', 'mona', 'mike', 'mary', 'gus', 'otto'].map((u) =>
        signUpAndIn(t, { username: `${u}msg` }),
      ),
    );
    serverId = (await createWorkspace(t, olga, 'Msgs')).id;
    await inviteAndJoin(t, olga, serverId, [mona, mike, mary]);
    ok(await setRole(t, olga, serverId, mona.id, 'MODERATOR'));
    const channels = ok(await t.gql(CHANNELS, { s: serverId }, olga)).channels;
    general = channels.find((c: any) => c.name === 'general').id;
    random = channels.find((c: any) => c.name === 'random').id;
    secret = ok(
      await t.gql(CREATE_CHANNEL, { i: { serverId, name: 'secret', isPrivate: true } }, olga),
    ).createChannel.id;
    await inviteAndJoin(t, olga, serverId, [gus], { role: 'GUEST', channelIds: [general] });
  });
  afterAll(async () => t?.close());

  it('takes text up to the byte limit exactly, multi-byte characters included, and trims it', async () => {
    // SVC_LIMIT_MESSAGE_BYTES=64: "€" is 3 bytes, "😀" is 4.
    const a61 = 'a'.repeat(61);
    expect((await send(t, mike, general, `${a61}€`)).text).toBe(`${a61}€`);
    expect((await send(t, mike, general, '😀'.repeat(16))).text).toBe('😀'.repeat(16));
    // Surrounding whitespace is trimmed before counting.
    expect((await send(t, mike, general, `  \n ${a61}€ \t`)).text).toBe(`${a61}€`);
    const over = expectCode(await sendRaw(t, mike, general, `a${a61}€`), 'VALIDATION');
    expect(over.message).toMatch(/65 bytes.*64 UTF-8 bytes.*SVC_LIMIT_MESSAGE_BYTES/);
    expect(over.extensions!.limit).toBe(64);
    expectCode(await sendRaw(t, mike, general, `${'😀'.repeat(16)}a`), 'VALIDATION');
    expectCode(await sendRaw(t, mike, general, ''), 'VALIDATION');
    expectCode(await sendRaw(t, mike, general, ' \n\t\u3000 '), 'VALIDATION');
    expectCode(await sendRaw(t, mike, general, 'a\ud800b'), 'VALIDATION');
  });

  it('refuses writes from outside, while archived, timed out, and hides other workspaces', async () => {
    expectCode(await sendRaw(t, otto, general, 'hi'), 'NOT_FOUND');
    expectCode(await t.gql(MESSAGES, { c: general }, otto), 'NOT_FOUND');
    expectCode(await sendRaw(t, mike, secret, 'hi'), 'NOT_FOUND');
    expectCode(await t.gql(MESSAGES, { c: secret }, mike), 'NOT_FOUND');
    expectCode(await sendRaw(t, gus, random, 'hi'), 'NOT_FOUND');
    expectCode(await sendRaw(t, mike, newId(), 'hi'), 'NOT_FOUND');
    expectCode(await sendRaw(t, mike, 'nope', 'hi'), 'NOT_FOUND');
    // A message of a hidden conversation is hidden too, whatever the operation.
    const hidden = await send(t, olga, secret, 'psst');
    expectCode(await t.gql(REACT, { m: hidden.id, e: '👍' }, mike), 'NOT_FOUND');
    expectCode(await t.gql(DELETE, { m: hidden.id }, mike), 'NOT_FOUND');
    expectCode(await t.gql(FORWARD, { m: hidden.id, to: general }, mike), 'NOT_FOUND');
    expectCode(await sendRaw(t, mike, general, 'reply', hidden.id), 'NOT_FOUND');

    // The guest writes where it was given access.
    await send(t, gus, general, 'guest hi');

    ok(
      await t.gql(
        'mutation($c: ID!) { archiveChannel(conversationId: $c) { id } }',
        { c: random },
        olga,
      ),
    );
    const archived = expectCode(await sendRaw(t, mike, random, 'hi'), 'CONVERSATION_ARCHIVED');
    expect(archived.message).toMatch(/archived/);
    expect(rows(ok(await t.gql(MESSAGES, { c: random }, mike)))).toEqual([]);
    ok(
      await t.gql(
        'mutation($c: ID!) { unarchiveChannel(conversationId: $c) { id } }',
        { c: random },
        olga,
      ),
    );

    const m = await send(t, mary, general, 'before');
    ok(
      await t.gql(
        'mutation($s: ID!, $u: ID!) { timeoutMember(serverId: $s, userId: $u, minutes: 10) { user { id } } }',
        { s: serverId, u: mary.id },
        mona,
      ),
    );
    const timed = expectCode(await sendRaw(t, mary, general, 'during'), 'TIMED_OUT');
    expect(timed.extensions!.until).toBe(
      new Date(clock.now().getTime() + 10 * MINUTE_MS).toISOString(),
    );
    expectCode(await t.gql(REACT, { m: m.id, e: '👍' }, mary), 'TIMED_OUT');
    expectCode(await t.gql(EDIT, { m: m.id, text: 'x' }, mary), 'TIMED_OUT');
    // Reading goes on.
    ok(await t.gql(MESSAGES, { c: general }, mary));
    clock.advance(10 * MINUTE_MS + 1);
    await send(t, mary, general, 'after');
  });

  it('lets workspace members read a public channel they left, but write only once in it', async () => {
    const m = await send(t, olga, random, 'public news');
    expect(
      ok(await t.gql('mutation($c: ID!) { leaveChannel(conversationId: $c) }', { c: random }, mary))
        .leaveChannel,
    ).toBe(true);
    expect(rows(ok(await t.gql(MESSAGES, { c: random }, mary))).map((x) => x.id)).toContain(m.id);
    expectCode(await sendRaw(t, mary, random, 'hi'), 'FORBIDDEN');
    expectCode(await t.gql(REACT, { m: m.id, e: '👍' }, mary), 'FORBIDDEN');
    expectCode(
      await t.gql(
        'mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id } }',
        { c: random, m: m.id },
        mary,
      ),
      'FORBIDDEN',
    );
    ok(
      await t.gql(
        'mutation($c: ID!) { joinChannel(conversationId: $c) { id } }',
        { c: random },
        mary,
      ),
    );
    await send(t, mary, random, 'back');
  });

  it('replies in threads: counted on the root, listed apart, replies stay when the root goes', async () => {
    const root = await send(t, mike, general, 'root');
    clock.advance(1000);
    const r1 = await send(t, mary, general, 'r1', root.id);
    clock.advance(1000);
    await send(t, mike, general, 'r2', root.id);
    expect(r1.threadRootId).toBe(root.id);
    const top = rows(ok(await t.gql(MESSAGES, { c: general }, mike)));
    expect(top.map((m) => m.text)).not.toContain('r1');
    const shown = top.find((m) => m.id === root.id)!;
    expect(shown.replyCount).toBe(2);
    expect(shown.lastReplyAt).toBe(new Date(clock.now().getTime()).toISOString());
    expect(
      ok(await t.gql(THREAD, { m: root.id }, mike)).threadReplies.items.map((m: any) => m.text),
    ).toEqual(['r1', 'r2']);
    expectCode(await sendRaw(t, mike, general, 'nested', r1.id), 'VALIDATION');
    expectCode(await sendRaw(t, mike, random, 'elsewhere', root.id), 'NOT_FOUND');
    expectCode(await t.gql(THREAD, { m: r1.id }, mike), 'VALIDATION');

    const gone = ok(await t.gql(DELETE, { m: root.id }, mike)).deleteMessage;
    expect(gone).toMatchObject({ isDeleted: true, text: null, replyCount: 2 });
    expect(ok(await t.gql(THREAD, { m: root.id }, mike)).threadReplies.items).toHaveLength(2);
  });

  it('forwards a copy that names the original author, only into conversations the caller writes in', async () => {
    const original = await send(t, mary, general, 'news');
    const dm = (await conversationOf(t, mike, [olga])).conversation.id;
    const fwd = ok(await t.gql(FORWARD, { m: original.id, to: dm }, mike)).forwardMessage;
    expect(fwd).toMatchObject({
      conversationId: dm,
      serverId: DIRECT_SPACE_ID,
      text: 'news',
      author: { id: mike.id },
      forwardedFrom: { messageId: original.id, author: { id: mary.id } },
    });
    // A forward of the forward still points at the original.
    const again = ok(await t.gql(FORWARD, { m: fwd.id, to: general }, olga)).forwardMessage;
    expect(again.forwardedFrom.messageId).toBe(original.id);
    expectCode(await t.gql(FORWARD, { m: original.id, to: secret }, mike), 'NOT_FOUND');
    expectCode(await t.gql(FORWARD, { m: original.id, to: dm }, otto), 'NOT_FOUND');
  });

  it('edits by the author only, keeping the history for Moderators and the owner', async () => {
    const m = await send(t, mike, general, 'v1');
    clock.advance(1000);
    const e1 = ok(await t.gql(EDIT, { m: m.id, text: ' v2 ' }, mike)).editMessage;
    expect(e1.text).toBe('v2');
    expect(e1.editedAt).toBe(clock.now().toISOString());
    ok(await t.gql(EDIT, { m: m.id, text: 'v3' }, mike));
    expectCode(await t.gql(EDIT, { m: m.id, text: 'hijack' }, mona), 'FORBIDDEN');
    expectCode(await t.gql(EDIT, { m: m.id, text: '' }, mike), 'VALIDATION');
    expectCode(await t.gql(EDIT, { m: m.id, text: 'x'.repeat(65) }, mike), 'VALIDATION');

    const historyAs = async (who: Agent) =>
      rows(ok(await t.gql(HISTORY, { c: general }, who))).find((x) => x.id === m.id)!.editHistory;
    expect(await historyAs(mike)).toBeNull();
    expect(await historyAs(mary)).toBeNull();
    expect(await historyAs(gus)).toBeNull();
    expect(await historyAs(mona)).toEqual([{ previousText: 'v1' }, { previousText: 'v2' }]);
    expect(await historyAs(olga)).toEqual([{ previousText: 'v1' }, { previousText: 'v2' }]);
  });

  it('survives concurrent edits and deletes without losing or half-writing anything', async () => {
    const m = await send(t, mike, general, 'base');
    const results = await Promise.all(
      ['e1', 'e2', 'e3', 'e4'].map((text) => t.gql(EDIT, { m: m.id, text }, mike)),
    );
    const succeeded = results
      .filter((r) => !r.body.errors)
      .map((r) => r.body.data!.editMessage.text);
    for (const r of results.filter((r) => r.body.errors)) expectCode(r, 'CONFLICT');
    expect(succeeded.length).toBeGreaterThanOrEqual(1);
    const edits = await t.ctx.db.kysely
      .selectFrom('message_edit')
      .selectAll()
      .where('messageId', '=', m.id)
      .execute();
    expect(edits).toHaveLength(succeeded.length);
    const row = await t.ctx.db.kysely
      .selectFrom('message')
      .selectAll()
      .where('id', '=', m.id)
      .executeTakeFirstOrThrow();
    expect(succeeded).toContain(row.text);

    const [del, edit] = await Promise.all([
      t.gql(DELETE, { m: m.id }, mike),
      t.gql(EDIT, { m: m.id, text: 'late' }, mike),
    ]);
    expect(ok(del).deleteMessage).toMatchObject({ isDeleted: true, text: null });
    if (edit.body.errors) expectCode(edit, 'CONFLICT');
    const after = await t.ctx.db.kysely
      .selectFrom('message')
      .selectAll()
      .where('id', '=', m.id)
      .executeTakeFirstOrThrow();
    expect(after.text).toBeNull();
    expect(
      await t.ctx.db.kysely
        .selectFrom('message_edit')
        .selectAll()
        .where('messageId', '=', m.id)
        .execute(),
    ).toEqual([]);
    expectCode(await t.gql(EDIT, { m: m.id, text: 'later' }, mike), 'CONFLICT');
    // Deleting again answers the same.
    expect(ok(await t.gql(DELETE, { m: m.id }, mike)).deleteMessage.isDeleted).toBe(true);
  });

  it('deletes: the author, or a Moderator or the owner; not another member or a guest', async () => {
    const m1 = await send(t, mary, general, 'one');
    const m2 = await send(t, mary, general, 'two');
    const m3 = await send(t, mary, general, '@mikemsg x');
    expectCode(await t.gql(DELETE, { m: m1.id }, mike), 'FORBIDDEN');
    expectCode(await t.gql(DELETE, { m: m1.id }, gus), 'FORBIDDEN');
    const rec = recordEvents(t, serverId);
    expect(ok(await t.gql(DELETE, { m: m1.id }, mona)).deleteMessage.isDeleted).toBe(true);
    expect(ok(await t.gql(DELETE, { m: m2.id }, olga)).deleteMessage.isDeleted).toBe(true);
    expect(ok(await t.gql(DELETE, { m: m3.id }, mary)).deleteMessage).toMatchObject({
      isDeleted: true,
      text: null,
      mentions: { userIds: [] },
    });
    expect(rec.ofType('MessageDeleted').map((e) => e.payload.deletedBy)).toEqual([
      mona.id,
      olga.id,
      mary.id,
    ]);
    rec.stop();
    const listed = rows(ok(await t.gql(MESSAGES, { c: general }, mike))).find(
      (x) => x.id === m1.id,
    )!;
    expect(listed).toMatchObject({ isDeleted: true, text: null, reactions: [] });
    // In a direct conversation only the author deletes.
    const dm = (await conversationOf(t, mike, [mary])).conversation.id;
    const d = await send(t, mike, dm, 'dm');
    expectCode(await t.gql(DELETE, { m: d.id }, mary), 'FORBIDDEN');
  });

  it('reacts with one Unicode emoji, grouped per emoji with counts', async () => {
    const m = await send(t, mike, general, 'react');
    const react = async (who: Agent, e: string) => {
      clock.advance(1);
      ok(await t.gql(REACT, { m: m.id, e }, who));
    };
    await react(mary, '👍');
    await react(mary, '👍'); // again: nothing changes
    await react(gus, '👍🏽');
    await react(mike, '❤'); // stored as ❤️
    await react(mary, '❤️');
    await react(mike, '👨‍👩‍👧');
    await react(mike, '🇫🇷');
    const r = ok(await t.gql(REACT, { m: m.id, e: '👍' }, mike)).addReaction.reactions;
    expect(r).toEqual([
      { emoji: '👍', count: 2, reactedByMe: true },
      { emoji: '👍🏽', count: 1, reactedByMe: false },
      { emoji: '❤️', count: 2, reactedByMe: true },
      { emoji: '👨‍👩‍👧', count: 1, reactedByMe: true },
      { emoji: '🇫🇷', count: 1, reactedByMe: true },
    ]);
    for (const bad of ['a', '1', ':smile:', '👍👍', '', ' 👍', 'ab', '\u200d']) {
      expectCode(await t.gql(REACT, { m: m.id, e: bad }, mike), 'VALIDATION');
    }
    // At most 20 different emoji on one message.
    const many = [
      '😀',
      '😁',
      '😂',
      '🤣',
      '😃',
      '😄',
      '😅',
      '😆',
      '😉',
      '😊',
      '😋',
      '😎',
      '😍',
      '😘',
      '🥰',
    ];
    for (const e of many) ok(await t.gql(REACT, { m: m.id, e }, mary));
    const capped = expectCode(await t.gql(REACT, { m: m.id, e: '🙂' }, mary), 'VALIDATION');
    expect(capped.message).toMatch(/20 different emoji/);
    ok(await t.gql(REACT, { m: m.id, e: '😀' }, mike)); // an emoji already there still counts up
    const after = ok(await t.gql(UNREACT, { m: m.id, e: '👍' }, mike)).removeReaction.reactions;
    expect(after[0]).toEqual({ emoji: '👍', count: 1, reactedByMe: false });
    ok(await t.gql(UNREACT, { m: m.id, e: '👍' }, mike)); // not there: nothing changes
    expectCode(await t.gql(REACT, { m: newId(), e: '👍' }, mike), 'NOT_FOUND');
  });

  it('parses @user, #channel and @here mentions, leaving e-mail addresses and hidden channels out', async () => {
    const m = await send(t, mike, general, '@marymsg @nobody #random #secret @here a@b.c');
    expect(m.mentions.userIds).toEqual([mary.id]);
    expect(m.mentions.channelIds).toEqual([random]);
    expect(m.mentions.here).toBe(true);
    const byOwner = await send(t, olga, general, '#secret #RANDOM.');
    expect([...byOwner.mentions.channelIds].sort()).toEqual([random, secret].sort());
    // Edits parse again.
    const edited = ok(
      await t.gql(
        'mutation($m: ID!) { editMessage(messageId: $m, text: "@olgamsg") { mentions { userIds here } } }',
        { m: m.id },
        mike,
      ),
    ).editMessage;
    expect(edited.mentions).toEqual({ userIds: [olga.id], here: false });
  });

  it('pins and unpins; guests may not pin', async () => {
    const a = await send(t, mike, general, 'pin a');
    const b = await send(t, mike, general, 'pin b');
    expect(ok(await t.gql(PIN, { m: a.id }, mary)).pinMessage.pinned).toBe(true);
    clock.advance(1000);
    ok(await t.gql(PIN, { m: b.id }, mike));
    ok(await t.gql(PIN, { m: b.id }, mike));
    expectCode(await t.gql(PIN, { m: a.id }, gus), 'FORBIDDEN');
    expect(
      ok(await t.gql(PINNED, { c: general }, gus)).pinnedMessages.map((x: any) => x.id),
    ).toEqual([b.id, a.id]);
    expect(ok(await t.gql(UNPIN, { m: a.id }, mike)).unpinMessage.pinned).toBe(false);
    expect(
      ok(await t.gql(PINNED, { c: general }, mike)).pinnedMessages.map((x: any) => x.id),
    ).toEqual([b.id]);
    expectCode(await t.gql(PINNED, { c: secret }, mike), 'NOT_FOUND');
  });

  it('shows an empty linkPreviews list, and publishes events after commit to the right audience', async () => {
    const ws = recordEvents(t, serverId);
    const m = await send(t, mike, general, 'see https://example.org');
    expect(m.linkPreviews).toEqual([]);
    const created = ws.ofType('MessageCreated');
    expect(created).toHaveLength(1);
    expect(created[0]!.topic).toBe(workspaceTopic(serverId));
    expect(created[0]!.payload).toMatchObject({
      serverId,
      conversationId: general,
      audience: { kind: 'channel', conversationId: general },
      message: { id: m.id, authorId: mike.id, text: 'see https://example.org' },
    });
    await send(t, olga, secret, 'private');
    expect(ws.ofType('MessageCreated')[1]!.payload.audience).toEqual({
      kind: 'conversation',
      conversationId: secret,
    });
    // A refused send publishes nothing.
    await sendRaw(t, mike, general, '');
    expect(ws.ofType('MessageCreated')).toHaveLength(2);
    ok(await t.gql(REACT, { m: m.id, e: '🎉' }, mary));
    ok(await t.gql(PIN, { m: m.id }, mary));
    ok(
      await t.gql(
        'mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id } }',
        { c: general, m: m.id },
        mary,
      ),
    );
    expect(ws.ofType('ReactionAdded')[0]!.payload).toMatchObject({
      messageId: m.id,
      emoji: '🎉',
      userId: mary.id,
    });
    expect(ws.ofType('MessagePinned')[0]!.payload).toMatchObject({
      messageId: m.id,
      pinnedBy: mary.id,
    });
    ok(await t.gql(UNREACT, { m: m.id, e: '🎉' }, mary));
    ok(await t.gql(UNPIN, { m: m.id }, mary));
    ok(await t.gql(EDIT, { m: m.id, text: 'see @marymsg' }, mike));
    expect(ws.ofType('ReactionRemoved')[0]!.payload).toMatchObject({
      messageId: m.id,
      emoji: '🎉',
    });
    expect(ws.ofType('MessageUnpinned')[0]!.payload).toMatchObject({
      messageId: m.id,
      unpinnedBy: mary.id,
    });
    expect(ws.ofType('MessageEdited')[0]!.payload).toMatchObject({
      messageId: m.id,
      text: 'see @marymsg',
      mentions: { users: [mary.id], channels: [], here: false },
    });
    expect(ws.ofType('ReadMarkerUpdated')[0]!.payload).toMatchObject({
      messageId: m.id,
      audience: { kind: 'users', userIds: [mary.id] },
    });
    ws.stop();

    // Direct-space conversations go to each member's user topic.
    const dm = (await conversationOf(t, mary, [olga])).conversation.id;
    const olgaEvents = recordUser(t, olga.id);
    const maryEvents = recordUser(t, mary.id);
    const d = await send(t, mary, dm, 'psst');
    for (const rec of [olgaEvents, maryEvents]) {
      const e = rec.ofType('MessageCreated');
      expect(e).toHaveLength(1);
      expect(e[0]!.payload).toMatchObject({
        serverId: DIRECT_SPACE_ID,
        audience: { kind: 'conversation', conversationId: dm },
        message: { id: d.id },
      });
    }
    expect(olgaEvents.events[0]!.topic).toBe(userTopic(olga.id));
    olgaEvents.stop();
    maryEvents.stop();
  });

  it('answers CONVERSATION_ARCHIVED and TIMED_OUT with until to every message write', async () => {
    const own = await send(t, mike, random, 'in random');
    const elsewhere = await send(t, mike, general, 'to forward');
    ok(await t.gql(REACT, { m: own.id, e: '👍' }, mike));
    ok(await t.gql(PIN, { m: own.id }, mike));
    const writesOn = (agent: Agent, m: string, conv: string) => [
      sendRaw(t, agent, conv, 'hi'),
      sendRaw(t, agent, conv, 'reply', m),
      t.gql(FORWARD, { m: elsewhere.id, to: conv }, agent),
      t.gql(EDIT, { m, text: 'edited' }, agent),
      t.gql(DELETE, { m }, agent),
      t.gql(REACT, { m, e: '🎉' }, agent),
      t.gql(UNREACT, { m, e: '👍' }, agent),
      t.gql(PIN, { m }, agent),
      t.gql(UNPIN, { m }, agent),
    ];
    const ARCHIVE = 'mutation($c: ID!) { archiveChannel(conversationId: $c) { id } }';
    const UNARCHIVE = 'mutation($c: ID!) { unarchiveChannel(conversationId: $c) { id } }';
    ok(await t.gql(ARCHIVE, { c: random }, mona));
    // The author and the owner alike: the channel is read-only.
    for (const agent of [mike, olga]) {
      for (const res of await Promise.all(writesOn(agent, own.id, random))) {
        expectCode(res, 'CONVERSATION_ARCHIVED');
      }
    }
    ok(await t.gql(UNARCHIVE, { c: random }, mona));

    const TIMEOUT = `mutation($s: ID!, $u: ID!) { timeoutMember(serverId: $s, userId: $u, minutes: 5) {
      timedOutUntil } }`;
    const until = ok(await t.gql(TIMEOUT, { s: serverId, u: mike.id }, mona)).timeoutMember
      .timedOutUntil;
    for (const res of await Promise.all(writesOn(mike, own.id, random))) {
      expect(expectCode(res, 'TIMED_OUT').extensions!.until).toBe(until);
    }
    // Nothing was written meanwhile.
    const after = rows(ok(await t.gql(MESSAGES, { c: random }, olga)));
    expect(after.map((m) => m.id)).toContain(own.id);
    expect(after.find((m) => m.id === own.id)).toMatchObject({ text: 'in random' });
    clock.advance(5 * MINUTE_MS);
    ok(await t.gql(UNPIN, { m: own.id }, mike));
  });

  it('answers NOT_FOUND, not a fault, to a send racing the deletion of its workspace', async () => {
    const doomed = (await createWorkspace(t, olga, 'Racing')).id;
    const ch = ok(await t.gql(CHANNELS, { s: doomed }, olga)).channels[0].id;
    const svc = t.ctx.services.messages;
    const original = svc.takeMessageRate.bind(svc);
    // The workspace goes between the access check and the insert.
    svc.takeMessageRate = async (actor) => {
      await t.ctx.db.kysely.deleteFrom('workspace').where('id', '=', doomed).execute();
      return original(actor);
    };
    try {
      const err = expectCode(await sendRaw(t, olga, ch, 'too late'), 'NOT_FOUND');
      expect(err.message).toMatch(/conversation/);
    } finally {
      svc.takeMessageRate = original;
    }
    const left = await t.ctx.db.kysely
      .selectFrom('message')
      .select('id')
      .where('conversationId', '=', ch)
      .execute();
    expect(left).toEqual([]);
  });
});
