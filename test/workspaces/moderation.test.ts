import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MINUTE_MS, ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import {
  createWorkspace,
  expectCode,
  inviteAndJoin,
  ok,
  recordEvents,
  setRole,
} from './_helpers.js';
import { findMember } from '../../src/services/workspaces/queries.js';

const TIMEOUT = `mutation($s: ID!, $u: ID!, $m: Int!) {
  timeoutMember(serverId: $s, userId: $u, minutes: $m) { role timedOutUntil user { id } } }`;
const CLEAR = `mutation($s: ID!, $u: ID!) { clearTimeout(serverId: $s, userId: $u) { timedOutUntil } }`;
const CREATE_CHANNEL = 'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }';
const INVITE =
  'mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) { token } }';
const MY = 'query($s: ID!) { workspace(serverId: $s) { myTimedOutUntil } }';

describe('timeouts', () => {
  const clock = new ManualClock(Date.parse('2030-03-01T12:00:00Z'));
  let t: TestApp;
  let owner: Agent, mod: Agent, mod2: Agent, member: Agent, guest: Agent;
  let ws: { id: string };

  beforeAll(async () => {
    t = await createTestApp({ clock });
    [owner, mod, mod2, member, guest] = await Promise.all(
      ['owner', 'mod', 'mod2', 'member', 'guest'].map((u) =>
        signUpAndIn(t, { username: `${u}to` }),
      ),
    );
    ws = await createWorkspace(t, owner, 'Timeouts');
    await inviteAndJoin(t, owner, ws.id, [mod, mod2, member, guest]);
    for (const m of [mod, mod2]) ok(await setRole(t, owner, ws.id, m.id, 'MODERATOR'));
    ok(await setRole(t, owner, ws.id, guest.id, 'GUEST'));
  });
  afterAll(async () => t?.close());

  it('lets staff time out people they outrank, with bounds', async () => {
    expectCode(await t.gql(TIMEOUT, { s: ws.id, u: guest.id, m: 5 }, member), 'FORBIDDEN');
    expectCode(await t.gql(TIMEOUT, { s: ws.id, u: mod2.id, m: 5 }, mod), 'FORBIDDEN');
    expectCode(await t.gql(TIMEOUT, { s: ws.id, u: owner.id, m: 5 }, mod), 'FORBIDDEN');
    expectCode(await t.gql(TIMEOUT, { s: ws.id, u: member.id, m: 0 }, mod), 'VALIDATION');
    expectCode(await t.gql(TIMEOUT, { s: ws.id, u: member.id, m: 40321 }, mod), 'VALIDATION');
    expectCode(
      await t.gql(TIMEOUT, { s: ws.id, u: member.id, m: 5 }, await signUpAndIn(t)),
      'NOT_FOUND',
    );
    const m2 = ok(await t.gql(TIMEOUT, { s: ws.id, u: mod2.id, m: 1 }, owner)).timeoutMember;
    expect(m2.role).toBe('MODERATOR');
    ok(await t.gql(CLEAR, { s: ws.id, u: mod2.id }, owner));
  });

  it('answers TIMED_OUT with until on every write until the timeout ends', async () => {
    const rec = recordEvents(t, ws.id);
    const res = ok(await t.gql(TIMEOUT, { s: ws.id, u: member.id, m: 30 }, mod)).timeoutMember;
    const until = new Date(clock.now().getTime() + 30 * MINUTE_MS).toISOString();
    expect(res).toMatchObject({ role: 'MEMBER', timedOutUntil: until, user: { id: member.id } });
    expect(ok(await t.gql(MY, { s: ws.id }, member)).workspace.myTimedOutUntil).toBe(until);
    expect(rec.ofType('MemberTimedOut').map((e) => e.payload)).toEqual([
      expect.objectContaining({
        userId: member.id,
        until,
        by: mod.id,
        audience: { kind: 'workspace' },
      }),
    ]);

    const general = (
      await t.ctx.db.kysely
        .selectFrom('conversation')
        .select('id')
        .where('workspaceId', '=', ws.id)
        .where('name', '=', 'random')
        .executeTakeFirstOrThrow()
    ).id;
    const writes = [
      t.gql(CREATE_CHANNEL, { i: { serverId: ws.id, name: 'escape' } }, member),
      t.gql(INVITE, { i: { serverId: ws.id } }, member),
      t.gql(
        'mutation($c: ID!) { setChannelTopic(conversationId: $c, topic: "hi") { id } }',
        { c: general },
        member,
      ),
    ];
    for (const w of writes) {
      const err = expectCode(await w, 'TIMED_OUT');
      expect(err.extensions?.until).toBe(until);
    }
    // The service check other areas use says the same.
    const m = await findMember(t.ctx.db.kysely, ws.id, member.id);
    expect(() => t.ctx.services.workspaces.membership.assertNotTimedOut(m!)).toThrow(/timed out/);
    // Reading still works; elsewhere nothing changes.
    ok(
      await t.gql(
        'query($s: ID!) { workspace(serverId: $s) { channels { id } } }',
        { s: ws.id },
        member,
      ),
    );

    clock.advance(30 * MINUTE_MS - 1);
    expectCode(
      await t.gql(CREATE_CHANNEL, { i: { serverId: ws.id, name: 'escape' } }, member),
      'TIMED_OUT',
    );
    clock.advance(1);
    ok(await t.gql(CREATE_CHANNEL, { i: { serverId: ws.id, name: 'escape' } }, member));
    rec.stop();
  });

  it('answers TIMED_OUT to a timed-out Moderator on staff and channel writes too', async () => {
    const ch = ok(
      await t.gql(CREATE_CHANNEL, { i: { serverId: ws.id, name: 'staff-room' } }, owner),
    ).createChannel.id;
    const inviteId = ok(
      await t.gql(
        `mutation($i: CreateWorkspaceInviteInput!) {
      createWorkspaceInvite(input: $i) { invite { id } } }`,
        { i: { serverId: ws.id } },
        mod2,
      ),
    ).createWorkspaceInvite.invite.id;
    const until = ok(await t.gql(TIMEOUT, { s: ws.id, u: mod2.id, m: 10 }, owner)).timeoutMember
      .timedOutUntil;
    const c = (q: string, v: Record<string, unknown>) => t.gql(q, v, mod2);
    const writes = [
      c('mutation($i: UpdateWorkspaceInput!) { updateWorkspace(input: $i) { id } }', {
        i: { serverId: ws.id, name: 'Mine now' },
      }),
      setRole(t, mod2, ws.id, member.id, 'GUEST'),
      c('mutation($s: ID!, $u: ID!) { removeWorkspaceMember(serverId: $s, userId: $u) }', {
        s: ws.id,
        u: member.id,
      }),
      c(TIMEOUT, { s: ws.id, u: member.id, m: 5 }),
      c('mutation($id: ID!) { revokeWorkspaceInvite(inviteId: $id) { id } }', { id: inviteId }),
      c('mutation($c: ID!) { joinChannel(conversationId: $c) { id } }', { c: ch }),
      c('mutation($c: ID!) { archiveChannel(conversationId: $c) { id } }', { c: ch }),
      c('mutation($c: ID!, $n: String!) { renameChannel(conversationId: $c, name: $n) { id } }', {
        c: ch,
        n: 'mod-room',
      }),
      c(
        'mutation($c: ID!, $u: [ID!]!) { addChannelMembers(conversationId: $c, userIds: $u) { id } }',
        {
          c: ch,
          u: [member.id],
        },
      ),
      c('mutation($c: ID!, $u: ID!) { removeChannelMember(conversationId: $c, userId: $u) }', {
        c: ch,
        u: owner.id,
      }),
    ];
    for (const res of await Promise.all(writes)) {
      expect(expectCode(res, 'TIMED_OUT').extensions?.until).toBe(until);
    }
    ok(await t.gql(CLEAR, { s: ws.id, u: mod2.id }, owner));
    ok(
      await t.gql('mutation($c: ID!) { joinChannel(conversationId: $c) { id } }', { c: ch }, mod2),
    );
  });

  it('ends a timeout early with clearTimeout', async () => {
    ok(await t.gql(TIMEOUT, { s: ws.id, u: guest.id, m: 60 }, owner));
    expectCode(await t.gql(CLEAR, { s: ws.id, u: guest.id }, member), 'FORBIDDEN');
    expect(
      ok(await t.gql(CLEAR, { s: ws.id, u: guest.id }, mod)).clearTimeout.timedOutUntil,
    ).toBeNull();
    expect(ok(await t.gql(MY, { s: ws.id }, guest)).workspace.myTimedOutUntil).toBeNull();
  });

  it('does not stop a timed-out member from leaving', async () => {
    ok(await t.gql(TIMEOUT, { s: ws.id, u: guest.id, m: 60 }, owner));
    ok(await t.gql('mutation($s: ID!) { leaveWorkspace(serverId: $s) }', { s: ws.id }, guest));
  });
});
