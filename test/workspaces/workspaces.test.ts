import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import {
  WORKSPACE_FIELDS,
  createWorkspace,
  expectCode,
  inviteAndJoin,
  ok,
  recordEvents,
  setRole,
} from './_helpers.js';

const WORKSPACE = `query($s: ID!) { workspace(serverId: $s) { ${WORKSPACE_FIELDS} } }`;
const UPDATE = `mutation($i: UpdateWorkspaceInput!) { updateWorkspace(input: $i) { ${WORKSPACE_FIELDS} } }`;
const TRANSFER = `mutation($i: TransferWorkspaceOwnershipInput!) {
  transferWorkspaceOwnership(input: $i) { ${WORKSPACE_FIELDS} } }`;
const DELETE = 'mutation($i: DeleteWorkspaceInput!) { deleteWorkspace(input: $i) { deleted } }';
const LEAVE = 'mutation($s: ID!) { leaveWorkspace(serverId: $s) }';
const REMOVE = 'mutation($s: ID!, $u: ID!) { removeWorkspaceMember(serverId: $s, userId: $u) }';
const MEMBERS = `query($s: ID!, $after: String, $before: String, $limit: Int) { workspace(serverId: $s) {
  members(after: $after, before: $before, limit: $limit) {
    items { role user { id username } } nextCursor prevCursor } } }`;

describe('workspaces', () => {
  let t: TestApp;
  // owner, moderator, member, guest, outsider
  let alice: Agent, bob: Agent, carol: Agent, dave: Agent, eve: Agent;

  beforeAll(async () => {
    t = await createTestApp();
    [alice, bob, carol, dave, eve] = await Promise.all(
      ['alice', 'bob', 'carol', 'dave', 'eve'].map((u) => signUpAndIn(t, { username: `${u}ws` })),
    );
  });
  afterAll(async () => t?.close());

  /** A workspace of alice with bob as Moderator, carol as Member and dave as guest. */
  async function team(name: string) {
    const ws = await createWorkspace(t, alice, name);
    await inviteAndJoin(t, alice, ws.id, [bob, carol, dave]);
    ok(await setRole(t, alice, ws.id, bob.id, 'MODERATOR'));
    ok(await setRole(t, alice, ws.id, dave.id, 'GUEST'));
    return ws;
  }

  it('creates a workspace with #general and #random and lists it after the direct space', async () => {
    const ws = await createWorkspace(t, alice, '  Acme  ', 'Rockets');
    expect(ws).toMatchObject({
      name: 'Acme',
      description: 'Rockets',
      isDirect: false,
      ownerId: alice.id,
      role: 'OWNER',
      myRole: 'OWNER',
      memberCount: 1,
      myTimedOutUntil: null,
    });
    const channels = ok(
      await t.gql(
        'query($s: ID!) { workspace(serverId: $s) { channels { id name isPrivate } } }',
        { s: ws.id },
        alice,
      ),
    ).workspace.channels;
    expect(channels.map((c: { name: string }) => c.name)).toEqual(['general', 'random']);
    const mine = ok(
      await t.gql(`{ myWorkspaces { ${WORKSPACE_FIELDS} } }`, {}, alice),
    ).myWorkspaces;
    expect(mine[0]).toMatchObject({ id: DIRECT_SPACE_ID, isDirect: true, myRole: null });
    expect(mine.map((w: { id: string }) => w.id)).toContain(ws.id);
    // Someone else's list has the direct space only.
    const theirs = ok(await t.gql('{ myWorkspaces { id } }', {}, eve)).myWorkspaces;
    expect(theirs).toEqual([{ id: DIRECT_SPACE_ID }]);
  });

  it('refuses bad names', async () => {
    for (const name of ['', '   ', 'x'.repeat(81), 'a\u0000b']) {
      expectCode(
        await t.gql(
          'mutation($n: String!) { createWorkspace(input: { name: $n }) { id } }',
          { n: name },
          alice,
        ),
        'VALIDATION',
      );
    }
  });

  it('hides a workspace from non-members exactly like one that does not exist', async () => {
    const ws = await createWorkspace(t, alice, 'Hidden');
    const a = expectCode(await t.gql(WORKSPACE, { s: ws.id }, eve), 'NOT_FOUND');
    const b = expectCode(await t.gql(WORKSPACE, { s: newId() }, eve), 'NOT_FOUND');
    expect(a.message).toBe(b.message);
    expectCode(await t.gql(WORKSPACE, { s: 'not-an-id' }, eve), 'NOT_FOUND');
    expectCode(await t.gql(UPDATE, { i: { serverId: ws.id, name: 'x' } }, eve), 'NOT_FOUND');
    expectCode(
      await t.gql(DELETE, { i: { serverId: ws.id, confirmName: 'Hidden' } }, eve),
      'NOT_FOUND',
    );
    expectCode(await t.gql(WORKSPACE, { s: ws.id }), 'UNAUTHENTICATED');
  });

  it('renames and describes: owner and Moderators; announced with WorkspaceUpdated', async () => {
    const ws = await team('Renames');
    const rec = recordEvents(t, ws.id);
    const renamed = ok(await t.gql(UPDATE, { i: { serverId: ws.id, name: 'Renamed' } }, alice));
    expect(renamed.updateWorkspace).toMatchObject({ name: 'Renamed', description: null });
    const described = ok(
      await t.gql(UPDATE, { i: { serverId: ws.id, description: 'About us' } }, bob),
    );
    expect(described.updateWorkspace).toMatchObject({ name: 'Renamed', description: 'About us' });
    expectCode(await t.gql(UPDATE, { i: { serverId: ws.id, name: 'Mine' } }, carol), 'FORBIDDEN');
    expectCode(await t.gql(UPDATE, { i: { serverId: ws.id, name: 'Mine' } }, dave), 'FORBIDDEN');
    const updates = rec.ofType('WorkspaceUpdated');
    expect(updates.map((e) => e.payload)).toEqual([
      expect.objectContaining({
        serverId: ws.id,
        name: 'Renamed',
        audience: { kind: 'workspace' },
      }),
      expect.objectContaining({ serverId: ws.id, description: 'About us', updatedBy: bob.id }),
    ]);
    rec.stop();
  });

  it('changes roles by rank and never grants owner', async () => {
    const ws = await team('Roles');
    const rec = recordEvents(t, ws.id);
    // Owner makes carol a Moderator and back.
    expect(ok(await setRole(t, alice, ws.id, carol.id, 'MODERATOR')).setMemberRole.role).toBe(
      'MODERATOR',
    );
    ok(await setRole(t, alice, ws.id, carol.id, 'MEMBER'));
    expectCode(await setRole(t, alice, ws.id, carol.id, 'OWNER'), 'VALIDATION');
    // A Moderator manages Members and guests, not Moderators or the owner, and gives no
    // Moderator role.
    expect(ok(await setRole(t, bob, ws.id, dave.id, 'MEMBER')).setMemberRole.role).toBe('MEMBER');
    ok(await setRole(t, bob, ws.id, dave.id, 'GUEST'));
    expectCode(await setRole(t, bob, ws.id, carol.id, 'MODERATOR'), 'FORBIDDEN');
    expectCode(await setRole(t, bob, ws.id, alice.id, 'MEMBER'), 'FORBIDDEN');
    expectCode(await setRole(t, bob, ws.id, bob.id, 'MEMBER'), 'FORBIDDEN');
    // Members and guests change no roles; outsiders are NOT_FOUND; non-members NOT_FOUND.
    expectCode(await setRole(t, carol, ws.id, dave.id, 'MEMBER'), 'FORBIDDEN');
    expectCode(await setRole(t, dave, ws.id, carol.id, 'GUEST'), 'FORBIDDEN');
    expectCode(await setRole(t, eve, ws.id, carol.id, 'GUEST'), 'NOT_FOUND');
    expectCode(await setRole(t, alice, ws.id, eve.id, 'GUEST'), 'NOT_FOUND');
    const changes = rec.ofType('MemberRoleChanged').map((e) => e.payload);
    expect(changes).toEqual([
      expect.objectContaining({ userId: carol.id, role: 'moderator', previousRole: 'member' }),
      expect.objectContaining({ userId: carol.id, role: 'member', previousRole: 'moderator' }),
      expect.objectContaining({ userId: dave.id, role: 'member', previousRole: 'guest' }),
      expect.objectContaining({ userId: dave.id, role: 'guest', previousRole: 'member' }),
    ]);
    rec.stop();
  });

  it('hands the workspace over: member else NOT_FOUND, not a guest, both changes announced', async () => {
    const ws = await team('Handover');
    const rec = recordEvents(t, ws.id);
    expectCode(
      await t.gql(TRANSFER, { i: { serverId: ws.id, userId: eve.id } }, alice),
      'NOT_FOUND',
    );
    expectCode(
      await t.gql(TRANSFER, { i: { serverId: ws.id, userId: newId() } }, alice),
      'NOT_FOUND',
    );
    expectCode(
      await t.gql(TRANSFER, { i: { serverId: ws.id, userId: dave.id } }, alice),
      'VALIDATION',
    );
    expectCode(
      await t.gql(TRANSFER, { i: { serverId: ws.id, userId: carol.id } }, bob),
      'FORBIDDEN',
    );
    expectCode(
      await t.gql(TRANSFER, { i: { serverId: ws.id, userId: carol.id } }, eve),
      'NOT_FOUND',
    );
    expect(rec.events).toHaveLength(0);
    const res = ok(await t.gql(TRANSFER, { i: { serverId: ws.id, userId: carol.id } }, alice));
    expect(res.transferWorkspaceOwnership).toMatchObject({
      ownerId: carol.id,
      myRole: 'MODERATOR',
    });
    expect(ok(await t.gql(WORKSPACE, { s: ws.id }, carol)).workspace.myRole).toBe('OWNER');
    expect(rec.ofType('MemberRoleChanged').map((e) => e.payload)).toEqual([
      expect.objectContaining({ userId: carol.id, role: 'owner', previousRole: 'member' }),
      expect.objectContaining({ userId: alice.id, role: 'moderator', previousRole: 'owner' }),
    ]);
    // Exactly one owner: the old owner now has a Moderator's rights only.
    expectCode(
      await t.gql(DELETE, { i: { serverId: ws.id, confirmName: 'Handover' } }, alice),
      'FORBIDDEN',
    );
    expectCode(await setRole(t, alice, ws.id, bob.id, 'MEMBER'), 'FORBIDDEN');
    rec.stop();
  });

  it('lets members leave but not the owner, and removes members by rank', async () => {
    const ws = await team('Leaving');
    const rec = recordEvents(t, ws.id);
    expectCode(await t.gql(LEAVE, { s: ws.id }, alice), 'VALIDATION');
    expectCode(await t.gql(REMOVE, { s: ws.id, u: alice.id }, bob), 'FORBIDDEN');
    expectCode(await t.gql(REMOVE, { s: ws.id, u: dave.id }, carol), 'FORBIDDEN');
    expectCode(await t.gql(REMOVE, { s: ws.id, u: eve.id }, bob), 'NOT_FOUND');
    expect(ok(await t.gql(REMOVE, { s: ws.id, u: dave.id }, bob)).removeWorkspaceMember).toBe(true);
    expect(ok(await t.gql(LEAVE, { s: ws.id }, carol)).leaveWorkspace).toBe(true);
    for (const gone of [carol, dave]) {
      expectCode(await t.gql(WORKSPACE, { s: ws.id }, gone), 'NOT_FOUND');
    }
    // Their channel memberships went with them.
    const left = await t.ctx.db.kysely
      .selectFrom('conversation_member')
      .innerJoin('conversation', 'conversation.id', 'conversation_member.conversationId')
      .select('conversation_member.accountId')
      .where('conversation.workspaceId', '=', ws.id)
      .where('conversation_member.accountId', 'in', [carol.id, dave.id])
      .execute();
    expect(left).toEqual([]);
    expect(rec.ofType('MemberLeft').map((e) => e.payload)).toEqual([
      expect.objectContaining({ userId: dave.id, reason: 'removed', removedBy: bob.id }),
      expect.objectContaining({ userId: carol.id, reason: 'left' }),
    ]);
    expect(ok(await t.gql(WORKSPACE, { s: ws.id }, alice)).workspace.memberCount).toBe(2);
    rec.stop();
  });

  it('deletes for good: owner only, confirmName, MemberLeft to each member, then NOT_FOUND', async () => {
    const ws = await team('Doomed');
    const token = await inviteAndJoin(t, alice, ws.id, []);
    const general = (
      await t.ctx.db.kysely
        .selectFrom('conversation')
        .select('id')
        .where('workspaceId', '=', ws.id)
        .where('name', '=', 'general')
        .executeTakeFirstOrThrow()
    ).id;
    const messageId = newId();
    await t.ctx.db.kysely
      .insertInto('message')
      .values({
        id: messageId,
        conversationId: general,
        workspaceId: ws.id,
        authorId: carol.id,
        text: 'hello',
        ciphertext: null,
        threadRootId: null,
        forwardedFromId: null,
        createdAt: Date.now(),
        editedAt: null,
        deletedAt: null,
        deletedBy: null,
        replyCount: 0,
        lastReplyAt: null,
        mentions: null,
      })
      .execute();
    // A thread reply, a reaction, a pin, an edit and a read marker hang off it.
    const reply = ok(
      await t.gql(
        'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }',
        { i: { conversationId: general, text: 'a reply', threadRootId: messageId } },
        bob,
      ),
    ).sendMessage.id;
    for (const q of [
      'mutation($m: ID!) { addReaction(messageId: $m, emoji: "👍") { id } }',
      'mutation($m: ID!) { pinMessage(messageId: $m) { id } }',
      'mutation($m: ID!) { editMessage(messageId: $m, text: "hello again") { id } }',
    ]) {
      ok(await t.gql(q, { m: messageId }, carol));
    }
    ok(
      await t.gql(
        'mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id } }',
        { c: general, m: reply },
        alice,
      ),
    );
    const rec = recordEvents(t, ws.id);
    expectCode(
      await t.gql(DELETE, { i: { serverId: ws.id, confirmName: 'Doomed' } }, bob),
      'FORBIDDEN',
    );
    expectCode(
      await t.gql(DELETE, { i: { serverId: ws.id, confirmName: 'doomed' } }, alice),
      'VALIDATION',
    );
    expectCode(
      await t.gql(DELETE, { i: { serverId: ws.id, confirmName: 'Doomed' } }, eve),
      'NOT_FOUND',
    );
    expect(rec.events).toHaveLength(0);
    const res = ok(await t.gql(DELETE, { i: { serverId: ws.id, confirmName: 'Doomed' } }, alice));
    expect(res.deleteWorkspace).toEqual({ deleted: true });
    const left = rec.ofType('MemberLeft').map((e) => e.payload);
    expect(left).toHaveLength(4);
    for (const a of [alice, bob, carol, dave]) {
      expect(left).toContainEqual(
        expect.objectContaining({ userId: a.id, audience: { kind: 'users', userIds: [a.id] } }),
      );
    }
    expect(rec.ofType('WorkspaceDeleted')).toHaveLength(1);
    for (const a of [alice, bob, carol, dave, eve]) {
      const err = expectCode(await t.gql(WORKSPACE, { s: ws.id }, a), 'NOT_FOUND');
      expect(err.message).toBe('workspace not found');
      const mine = ok(await t.gql('{ myWorkspaces { id } }', {}, a)).myWorkspaces;
      expect(mine.map((w: { id: string }) => w.id)).not.toContain(ws.id);
    }
    expectCode(
      await t.gql('mutation($t: String!) { joinWorkspace(token: $t) { id } }', { t: token }, eve),
      'INVALID_TOKEN',
    );
    const db = t.ctx.db.kysely;
    const counts = await Promise.all([
      db.selectFrom('workspace').select('id').where('id', '=', ws.id).execute(),
      db
        .selectFrom('workspace_member')
        .select('accountId')
        .where('workspaceId', '=', ws.id)
        .execute(),
      db.selectFrom('conversation').select('id').where('workspaceId', '=', ws.id).execute(),
      db
        .selectFrom('conversation_member')
        .select('accountId')
        .where('conversationId', '=', general)
        .execute(),
      db.selectFrom('workspace_invite').select('id').where('workspaceId', '=', ws.id).execute(),
      db.selectFrom('message').select('id').where('id', 'in', [messageId, reply]).execute(),
      db.selectFrom('reaction').select('messageId').where('messageId', '=', messageId).execute(),
      db.selectFrom('pin').select('messageId').where('conversationId', '=', general).execute(),
      db.selectFrom('message_edit').select('id').where('messageId', '=', messageId).execute(),
    ]);
    expect(counts.map((c) => c.length)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    rec.stop();
  });

  it('keeps the direct space: no hand-over, no deletion, no member list', async () => {
    const direct = ok(
      await t.gql(
        `query($s: ID!) { workspace(serverId: $s) { ${WORKSPACE_FIELDS} channels { id } members { nextCursor } } }`,
        { s: DIRECT_SPACE_ID },
        eve,
      ),
    ).workspace;
    expect(direct).toMatchObject({ isDirect: true, ownerId: null, myRole: null, memberCount: 0 });
    expect(direct.members).toBeNull();
    expect(direct.channels).toEqual([]);
    const del = expectCode(
      await t.gql(
        DELETE,
        { i: { serverId: DIRECT_SPACE_ID, confirmName: 'Direct messages' } },
        eve,
      ),
      'VALIDATION',
    );
    expect(del.message).toMatch(/direct space/);
    expectCode(
      await t.gql(TRANSFER, { i: { serverId: DIRECT_SPACE_ID, userId: alice.id } }, eve),
      'VALIDATION',
    );
    expectCode(await t.gql(LEAVE, { s: DIRECT_SPACE_ID }, eve), 'VALIDATION');
    expectCode(
      await t.gql(UPDATE, { i: { serverId: DIRECT_SPACE_ID, name: 'Mine' } }, eve),
      'VALIDATION',
    );
    expectCode(await setRole(t, eve, DIRECT_SPACE_ID, alice.id, 'GUEST'), 'VALIDATION');
  });

  it('pages members in join order both ways; a guest sees only themself', async () => {
    const ws = await team('Paging');
    const all = ok(await t.gql(MEMBERS, { s: ws.id, limit: 10 }, carol)).workspace.members;
    expect(all.items.map((m: { user: { id: string } }) => m.user.id)).toEqual([
      alice.id,
      bob.id,
      carol.id,
      dave.id,
    ]);
    expect(all.items.map((m: { role: string }) => m.role)).toEqual([
      'OWNER',
      'MODERATOR',
      'MEMBER',
      'GUEST',
    ]);
    expect(all.nextCursor).toBeNull();
    const p1 = ok(await t.gql(MEMBERS, { s: ws.id, limit: 3 }, carol)).workspace.members;
    expect(p1.items).toHaveLength(3);
    expect(p1.prevCursor).toBeNull();
    const p2 = ok(await t.gql(MEMBERS, { s: ws.id, limit: 3, after: p1.nextCursor }, carol))
      .workspace.members;
    expect(p2.items.map((m: { user: { id: string } }) => m.user.id)).toEqual([dave.id]);
    expect(p2.nextCursor).toBeNull();
    const back = ok(await t.gql(MEMBERS, { s: ws.id, limit: 2, before: p2.prevCursor }, carol))
      .workspace.members;
    expect(back.items.map((m: { user: { id: string } }) => m.user.id)).toEqual([bob.id, carol.id]);
    expect(back.nextCursor).not.toBeNull();
    expectCode(await t.gql(MEMBERS, { s: ws.id, after: 'forged!' }, carol), 'VALIDATION');
    expectCode(await t.gql(MEMBERS, { s: ws.id, limit: 0 }, carol), 'VALIDATION');
    const guest = ok(await t.gql(MEMBERS, { s: ws.id }, dave)).workspace.members;
    expect(guest.items.map((m: { user: { id: string } }) => m.user.id)).toEqual([dave.id]);
    // dave joined last: a first page smaller than the list still holds him, and nothing more.
    const small = ok(await t.gql(MEMBERS, { s: ws.id, limit: 1 }, dave)).workspace.members;
    expect(small.items.map((m: { user: { id: string } }) => m.user.id)).toEqual([dave.id]);
    expect(small.nextCursor).toBeNull();
  });
});
