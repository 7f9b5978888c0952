import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { newId } from '../../src/lib/ids.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import {
  createWorkspace,
  expectCode,
  inviteAndJoin,
  ok,
  recordEvents,
  setRole,
} from '../workspaces/_helpers.js';
import { conversationOf } from '../conversations/_helpers.js';

const C = 'id name topic isPrivate archivedAt';
const CREATE = `mutation($i: CreateChannelInput!) { createChannel(input: $i) { ${C} } }`;
const RENAME = `mutation($c: ID!, $n: String!) { renameChannel(conversationId: $c, name: $n) { ${C} } }`;
const TOPIC = `mutation($c: ID!, $t: String) { setChannelTopic(conversationId: $c, topic: $t) { ${C} } }`;
const ARCHIVE = `mutation($c: ID!) { archiveChannel(conversationId: $c) { ${C} } }`;
const UNARCHIVE = `mutation($c: ID!) { unarchiveChannel(conversationId: $c) { ${C} } }`;
const JOIN = `mutation($c: ID!) { joinChannel(conversationId: $c) { ${C} } }`;
const LEAVE = 'mutation($c: ID!) { leaveChannel(conversationId: $c) }';
const ADD = `mutation($c: ID!, $u: [ID!]!) { addChannelMembers(conversationId: $c, userIds: $u) { id } }`;
const REMOVE = 'mutation($c: ID!, $u: ID!) { removeChannelMember(conversationId: $c, userId: $u) }';
const LIST = `query($s: ID!, $a: Boolean) { channels(serverId: $s, includeArchived: $a) { ${C} } }`;

describe('channels', () => {
  let t: TestApp;
  let owner: Agent, mod: Agent, member: Agent, member2: Agent, guest: Agent, outsider: Agent;
  let ws: { id: string };

  const names = async (agent: Agent, includeArchived = false) =>
    ok(await t.gql(LIST, { s: ws.id, a: includeArchived }, agent)).channels.map(
      (c: { name: string }) => c.name,
    );
  const inChannel = async (conversationId: string, accountId: string) =>
    !!(await t.ctx.db.kysely
      .selectFrom('conversation_member')
      .select('accountId')
      .where('conversationId', '=', conversationId)
      .where('accountId', '=', accountId)
      .executeTakeFirst());

  beforeAll(async () => {
    t = await createTestApp();
    [owner, mod, member, member2, guest, outsider] = await Promise.all(
      ['owner', 'mod', 'member', 'member2', 'guest', 'outsider'].map((u) =>
        signUpAndIn(t, { username: `${u}ch` }),
      ),
    );
    ws = await createWorkspace(t, owner, 'Channels');
    await inviteAndJoin(t, owner, ws.id, [mod, member, member2, guest]);
    ok(await setRole(t, owner, ws.id, mod.id, 'MODERATOR'));
    ok(await setRole(t, owner, ws.id, guest.id, 'GUEST'));
  });
  afterAll(async () => t?.close());

  it('creates public channels with normalized, unique names; guests and outsiders cannot', async () => {
    const rec = recordEvents(t, ws.id);
    const made = ok(
      await t.gql(
        CREATE,
        { i: { serverId: ws.id, name: '#Design Team', topic: ' Pixels ' } },
        member,
      ),
    ).createChannel;
    expect(made).toMatchObject({
      name: 'design-team',
      topic: 'Pixels',
      isPrivate: false,
      archivedAt: null,
    });
    expect(await inChannel(made.id, member.id)).toBe(true);
    expectCode(
      await t.gql(CREATE, { i: { serverId: ws.id, name: 'DESIGN-team' } }, mod),
      'CONFLICT',
    );
    for (const name of ['', '  ', 'a'.repeat(81), 'no/slash', 'dot.dot']) {
      expectCode(await t.gql(CREATE, { i: { serverId: ws.id, name } }, member), 'VALIDATION');
    }
    expectCode(await t.gql(CREATE, { i: { serverId: ws.id, name: 'guests' } }, guest), 'FORBIDDEN');
    expectCode(
      await t.gql(CREATE, { i: { serverId: ws.id, name: 'outside' } }, outsider),
      'NOT_FOUND',
    );
    expect(rec.ofType('ChannelCreated').map((e) => e.payload)).toEqual([
      expect.objectContaining({
        conversationId: made.id,
        name: 'design-team',
        audience: { kind: 'channel', conversationId: made.id },
      }),
    ]);
    // Every member sees it; the guest does not.
    expect(await names(member2)).toContain('design-team');
    expect(await names(guest)).not.toContain('design-team');
    rec.stop();
  });

  it('joins and leaves public channels; guests can neither see nor join them', async () => {
    const ch = ok(
      await t.gql(CREATE, { i: { serverId: ws.id, name: 'lobby' } }, owner),
    ).createChannel;
    const rec = recordEvents(t, ws.id);
    expect(ok(await t.gql(JOIN, { c: ch.id }, member2)).joinChannel.id).toBe(ch.id);
    expect(await inChannel(ch.id, member2.id)).toBe(true);
    ok(await t.gql(JOIN, { c: ch.id }, member2));
    expectCode(await t.gql(JOIN, { c: ch.id }, guest), 'NOT_FOUND');
    expectCode(await t.gql(JOIN, { c: ch.id }, outsider), 'NOT_FOUND');
    expectCode(await t.gql(JOIN, { c: newId() }, member2), 'NOT_FOUND');
    expect(ok(await t.gql(LEAVE, { c: ch.id }, member2)).leaveChannel).toBe(true);
    expect(ok(await t.gql(LEAVE, { c: ch.id }, member2)).leaveChannel).toBe(false);
    expect(await inChannel(ch.id, member2.id)).toBe(false);
    expect(rec.events.map((e) => [e.type, e.payload.userId])).toEqual([
      ['MemberAddedToConversation', member2.id],
      ['MemberRemovedFromConversation', member2.id],
    ]);
    rec.stop();
  });

  it('keeps private channels to their members; members add people, guests need staff', async () => {
    const rec = recordEvents(t, ws.id);
    const secret = ok(
      await t.gql(
        CREATE,
        { i: { serverId: ws.id, name: 'secret', isPrivate: true, memberIds: [member2.id] } },
        member,
      ),
    ).createChannel;
    expect(secret.isPrivate).toBe(true);
    expect(await inChannel(secret.id, member2.id)).toBe(true);
    expect(rec.ofType('ChannelCreated')[0]!.payload.audience).toEqual({
      kind: 'conversation',
      conversationId: secret.id,
    });
    // Not in it: invisible, even to staff, and not joinable.
    expect(await names(mod)).not.toContain('secret');
    expectCode(await t.gql(JOIN, { c: secret.id }, mod), 'NOT_FOUND');
    expectCode(await t.gql(RENAME, { c: secret.id, n: 'x' }, mod), 'NOT_FOUND');
    expectCode(await t.gql(ADD, { c: secret.id, u: [mod.id] }, mod), 'NOT_FOUND');
    // A member in it adds a member; not a guest, not an outsider.
    ok(await t.gql(ADD, { c: secret.id, u: [mod.id] }, member));
    expect(await names(mod)).toContain('secret');
    expectCode(await t.gql(ADD, { c: secret.id, u: [guest.id] }, member), 'FORBIDDEN');
    expectCode(await t.gql(ADD, { c: secret.id, u: [outsider.id] }, member), 'NOT_FOUND');
    expectCode(await t.gql(ADD, { c: secret.id, u: [newId()] }, member), 'NOT_FOUND');
    // Staff add the guest, who then sees it.
    ok(await t.gql(ADD, { c: secret.id, u: [guest.id] }, mod));
    expect(await names(guest)).toContain('secret');
    // Removal: staff only, by rank.
    expectCode(await t.gql(REMOVE, { c: secret.id, u: guest.id }, member), 'FORBIDDEN');
    expect(ok(await t.gql(REMOVE, { c: secret.id, u: guest.id }, mod)).removeChannelMember).toBe(
      true,
    );
    expect(await names(guest)).not.toContain('secret');
    const removed = rec.ofType('MemberRemovedFromConversation').map((e) => e.payload.audience);
    expect(removed).toEqual([
      { kind: 'conversation', conversationId: secret.id },
      { kind: 'users', userIds: [guest.id] },
    ]);
    // Leaving a private channel.
    expect(ok(await t.gql(LEAVE, { c: secret.id }, member2)).leaveChannel).toBe(true);
    expectCode(await t.gql(JOIN, { c: secret.id }, member2), 'NOT_FOUND');
    rec.stop();
  });

  it('renames and sets topics: members in the channel, staff anywhere; announced', async () => {
    const ch = ok(
      await t.gql(CREATE, { i: { serverId: ws.id, name: 'plans' } }, member),
    ).createChannel;
    const rec = recordEvents(t, ws.id);
    expect(ok(await t.gql(RENAME, { c: ch.id, n: 'Roadmap' }, member)).renameChannel.name).toBe(
      'roadmap',
    );
    expectCode(await t.gql(RENAME, { c: ch.id, n: 'mine' }, member2), 'FORBIDDEN');
    expectCode(await t.gql(RENAME, { c: ch.id, n: 'general' }, member), 'CONFLICT');
    expect(ok(await t.gql(TOPIC, { c: ch.id, t: 'Q3' }, mod)).setChannelTopic.topic).toBe('Q3');
    expect(ok(await t.gql(TOPIC, { c: ch.id, t: null }, member)).setChannelTopic.topic).toBeNull();
    expectCode(await t.gql(TOPIC, { c: ch.id, t: 'x'.repeat(251) }, member), 'VALIDATION');
    expect(rec.ofType('ChannelUpdated').map((e) => e.payload)).toEqual([
      expect.objectContaining({ name: 'roadmap', updatedBy: member.id }),
      expect.objectContaining({ topic: 'Q3', updatedBy: mod.id }),
      expect.objectContaining({ topic: null, updatedBy: member.id }),
    ]);
    rec.stop();
  });

  it('archives: staff only; every write then answers CONVERSATION_ARCHIVED until unarchived', async () => {
    const ch = ok(
      await t.gql(CREATE, { i: { serverId: ws.id, name: 'old-news' } }, member),
    ).createChannel;
    const rec = recordEvents(t, ws.id);
    expectCode(await t.gql(ARCHIVE, { c: ch.id }, member), 'FORBIDDEN');
    const archived = ok(await t.gql(ARCHIVE, { c: ch.id }, mod)).archiveChannel;
    expect(archived.archivedAt).not.toBeNull();
    expect(ok(await t.gql(ARCHIVE, { c: ch.id }, mod)).archiveChannel.archivedAt).toBe(
      archived.archivedAt,
    );
    expectCode(await t.gql(RENAME, { c: ch.id, n: 'new-news' }, member), 'CONVERSATION_ARCHIVED');
    expectCode(await t.gql(TOPIC, { c: ch.id, t: 'x' }, mod), 'CONVERSATION_ARCHIVED');
    expectCode(await t.gql(JOIN, { c: ch.id }, member2), 'CONVERSATION_ARCHIVED');
    expectCode(await t.gql(ADD, { c: ch.id, u: [member2.id] }, member), 'CONVERSATION_ARCHIVED');
    expect(await names(member)).not.toContain('old-news');
    expect(await names(member, true)).toContain('old-news');
    expectCode(await t.gql(UNARCHIVE, { c: ch.id }, member), 'FORBIDDEN');
    expect(ok(await t.gql(UNARCHIVE, { c: ch.id }, owner)).unarchiveChannel.archivedAt).toBeNull();
    ok(await t.gql(JOIN, { c: ch.id }, member2));
    expect(rec.events.map((e) => e.type)).toEqual([
      'ChannelArchived',
      'ChannelUnarchived',
      'MemberAddedToConversation',
    ]);
    rec.stop();
  });

  it('refuses channels in the direct space', async () => {
    expectCode(
      await t.gql(
        CREATE,
        { i: { serverId: '00000000-0000-7000-8000-000000000000', name: 'x' } },
        member,
      ),
      'VALIDATION',
    );
    // Direct and group conversations are not channels: nobody archives, renames or joins them
    // with the channel operations (the direct space has no Moderators).
    const dm = (await conversationOf(t, owner, [mod])).conversation.id;
    for (const agent of [owner, mod]) {
      expectCode(await t.gql(ARCHIVE, { c: dm }, agent), 'NOT_FOUND');
      expectCode(await t.gql(RENAME, { c: dm, n: 'x' }, agent), 'NOT_FOUND');
      expectCode(await t.gql(TOPIC, { c: dm, t: 'x' }, agent), 'NOT_FOUND');
    }
    expectCode(await t.gql(JOIN, { c: dm }, member), 'NOT_FOUND');
  });
});
