import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS, HOUR_MS, ManualClock } from '../../src/lib/clock.js';
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
  startSmtp,
  waitFor,
} from './_helpers.js';

const CREATE = `mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) {
  token link mailed
  invite { id serverId role createdById expiresAt maxUses uses revokedAt email channelIds state } } }`;
const JOIN = 'mutation($t: String!) { joinWorkspace(token: $t) { id myRole memberCount } }';
const REVOKE = 'mutation($id: ID!) { revokeWorkspaceInvite(inviteId: $id) { id state revokedAt } }';
const INVITES = 'query($s: ID!) { workspaceInvites(serverId: $s) { id createdById state uses } }';
const CHANNELS = 'query($s: ID!) { workspace(serverId: $s) { channels { id name } } }';

describe('workspace invites', () => {
  const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
  let t: TestApp;
  let owner: Agent, mod: Agent, member: Agent, guest: Agent, p1: Agent, p2: Agent, p3: Agent;

  beforeAll(async () => {
    t = await createTestApp({
      clock,
      env: {
        SVC_PUBLIC_BASE_URL: 'https://chat.example.org',
        SVC_LIMIT_INVITE_MAX_USES: '3',
        SVC_LIMIT_INVITES_PER_USER_PER_DAY: '6',
        SVC_LIMIT_MEMBERS_PER_WORKSPACE: '5',
      },
    });
    [owner, mod, member, guest, p1, p2, p3] = await Promise.all(
      ['owner', 'mod', 'member', 'guest', 'p1', 'p2', 'p3'].map((u) =>
        signUpAndIn(t, { username: `${u}inv` }),
      ),
    );
  });
  afterAll(async () => t?.close());

  it('returns the link once, defaults and caps max uses, and joins members with public channels', async () => {
    const ws = await createWorkspace(t, owner, 'Invites');
    const rec = recordEvents(t, ws.id);
    const created = ok(
      await t.gql(CREATE, { i: { serverId: ws.id } }, owner),
    ).createWorkspaceInvite;
    expect(created.link).toBe(`https://chat.example.org/invite/${created.token}`);
    expect(created.invite).toMatchObject({
      serverId: ws.id,
      role: 'MEMBER',
      createdById: owner.id,
      maxUses: 3,
      uses: 0,
      state: 'ACTIVE',
    });
    expect(Date.parse(created.invite.expiresAt)).toBe(clock.now().getTime() + 7 * DAY_MS);
    // The token is not stored: only its hash is.
    const stored = await t.ctx.db.kysely.selectFrom('workspace_invite').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(created.token);
    const over = expectCode(
      await t.gql(CREATE, { i: { serverId: ws.id, maxUses: 4 } }, owner),
      'VALIDATION',
    );
    expect(over.message).toMatch(/SVC_LIMIT_INVITE_MAX_USES/);
    expectCode(await t.gql(CREATE, { i: { serverId: ws.id, maxUses: 0 } }, owner), 'VALIDATION');
    expectCode(
      await t.gql(CREATE, { i: { serverId: ws.id, expiresInHours: 0 } }, owner),
      'VALIDATION',
    );

    const joined = ok(await t.gql(JOIN, { t: created.token }, member)).joinWorkspace;
    expect(joined).toMatchObject({ id: ws.id, myRole: 'MEMBER', memberCount: 2 });
    const names = ok(await t.gql(CHANNELS, { s: ws.id }, member)).workspace.channels;
    expect(names.map((c: { name: string }) => c.name)).toEqual(['general', 'random']);
    const inChannels = await t.ctx.db.kysely
      .selectFrom('conversation_member')
      .select('conversationId')
      .where('accountId', '=', member.id)
      .execute();
    expect(inChannels).toHaveLength(2);
    // Joining again changes nothing and spends no use.
    ok(await t.gql(JOIN, { t: created.token }, member));
    const list = ok(await t.gql(INVITES, { s: ws.id }, owner)).workspaceInvites;
    expect(list.find((i: { id: string }) => i.id === created.invite.id).uses).toBe(1);
    const joinedEvents = rec.ofType('MemberJoined').map((e) => e.payload);
    expect(joinedEvents).toEqual([
      expect.objectContaining({
        serverId: ws.id,
        userId: member.id,
        role: 'member',
        audience: { kind: 'workspace' },
      }),
    ]);
    rec.stop();
  });

  it('refuses unknown, used-up, revoked and expired tokens', async () => {
    const ws = await createWorkspace(t, owner, 'Tokens');
    expectCode(await t.gql(JOIN, { t: 'no-such-token' }, p1), 'INVALID_TOKEN');
    expectCode(await t.gql(JOIN, { t: 'x'.repeat(5000) }, p1), 'INVALID_TOKEN');
    const once = ok(
      await t.gql(CREATE, { i: { serverId: ws.id, maxUses: 1 } }, owner),
    ).createWorkspaceInvite;
    ok(await t.gql(JOIN, { t: once.token }, p1));
    expectCode(await t.gql(JOIN, { t: once.token }, p2), 'INVALID_TOKEN');

    const revoked = ok(
      await t.gql(CREATE, { i: { serverId: ws.id } }, owner),
    ).createWorkspaceInvite;
    const r = ok(await t.gql(REVOKE, { id: revoked.invite.id }, owner)).revokeWorkspaceInvite;
    expect(r.state).toBe('REVOKED');
    expect(
      ok(await t.gql(REVOKE, { id: revoked.invite.id }, owner)).revokeWorkspaceInvite.revokedAt,
    ).toBe(r.revokedAt);
    expectCode(await t.gql(JOIN, { t: revoked.token }, p2), 'INVALID_TOKEN');

    const short = ok(
      await t.gql(CREATE, { i: { serverId: ws.id, expiresInHours: 1 } }, owner),
    ).createWorkspaceInvite;
    clock.advance(HOUR_MS + 1);
    expectCode(await t.gql(JOIN, { t: short.token }, p2), 'EXPIRED_TOKEN');
    const list = ok(await t.gql(INVITES, { s: ws.id }, owner)).workspaceInvites;
    expect(list).toEqual([]);
    clock.advance(DAY_MS);
  });

  it('lets the creator or staff revoke, and lists all for staff but own for members', async () => {
    const ws = await createWorkspace(t, owner, 'Revocation');
    await inviteAndJoin(t, owner, ws.id, [mod, member]);
    ok(await setRole(t, owner, ws.id, mod.id, 'MODERATOR'));
    const mine = ok(await t.gql(CREATE, { i: { serverId: ws.id } }, member)).createWorkspaceInvite;
    const owners = ok(await t.gql(CREATE, { i: { serverId: ws.id } }, owner)).createWorkspaceInvite;
    const memberList = ok(await t.gql(INVITES, { s: ws.id }, member)).workspaceInvites;
    expect(memberList.map((i: { id: string }) => i.id)).toEqual([mine.invite.id]);
    const modList = ok(await t.gql(INVITES, { s: ws.id }, mod)).workspaceInvites;
    expect(modList.map((i: { id: string }) => i.id)).toEqual(
      expect.arrayContaining([mine.invite.id, owners.invite.id]),
    );
    expectCode(await t.gql(REVOKE, { id: owners.invite.id }, member), 'FORBIDDEN');
    expectCode(await t.gql(REVOKE, { id: owners.invite.id }, p3), 'NOT_FOUND');
    ok(await t.gql(REVOKE, { id: mine.invite.id }, member));
    ok(await t.gql(REVOKE, { id: owners.invite.id }, mod));
    clock.advance(DAY_MS);
  });

  it('gives a guest only the channels of their invite; guest invites are for staff', async () => {
    const ws = await createWorkspace(t, owner, 'Guests');
    await inviteAndJoin(t, owner, ws.id, [member]);
    const channels = ok(await t.gql(CHANNELS, { s: ws.id }, owner)).workspace.channels;
    const random = channels.find((c: { name: string }) => c.name === 'random');
    expectCode(
      await t.gql(
        CREATE,
        { i: { serverId: ws.id, role: 'GUEST', channelIds: [random.id] } },
        member,
      ),
      'FORBIDDEN',
    );
    expectCode(await t.gql(CREATE, { i: { serverId: ws.id, role: 'GUEST' } }, owner), 'VALIDATION');
    expectCode(await t.gql(CREATE, { i: { serverId: ws.id, role: 'OWNER' } }, owner), 'VALIDATION');
    const other = await createWorkspace(t, p3, 'Elsewhere');
    const foreign = ok(await t.gql(CHANNELS, { s: other.id }, p3)).workspace.channels[0];
    expectCode(
      await t.gql(
        CREATE,
        { i: { serverId: ws.id, role: 'GUEST', channelIds: [foreign.id] } },
        owner,
      ),
      'NOT_FOUND',
    );
    const inv = ok(
      await t.gql(
        CREATE,
        { i: { serverId: ws.id, role: 'GUEST', channelIds: [random.id] } },
        owner,
      ),
    ).createWorkspaceInvite;
    expect(inv.invite).toMatchObject({ role: 'GUEST', channelIds: [random.id] });
    const joined = ok(await t.gql(JOIN, { t: inv.token }, guest)).joinWorkspace;
    expect(joined.myRole).toBe('GUEST');
    const seen = ok(await t.gql(CHANNELS, { s: ws.id }, guest)).workspace.channels;
    expect(seen.map((c: { name: string }) => c.name)).toEqual(['random']);
    clock.advance(DAY_MS);
  });

  it('caps the invites one person creates in 24 hours', async () => {
    clock.advance(2 * DAY_MS);
    const ws = await createWorkspace(t, p2, 'Daily');
    for (let i = 0; i < 6; i++) ok(await t.gql(CREATE, { i: { serverId: ws.id } }, p2));
    const err = expectCode(await t.gql(CREATE, { i: { serverId: ws.id } }, p2), 'VALIDATION');
    expect(err.message).toMatch(/SVC_LIMIT_INVITES_PER_USER_PER_DAY/);
    clock.advance(DAY_MS - 1000);
    expectCode(await t.gql(CREATE, { i: { serverId: ws.id } }, p2), 'VALIDATION');
    clock.advance(1001);
    ok(await t.gql(CREATE, { i: { serverId: ws.id } }, p2));
  });

  it('refuses joining past the member cap, naming it', async () => {
    const ws = await createWorkspace(t, p3, 'Full');
    // p3 plus four more makes five, the cap.
    await inviteAndJoin(t, p3, ws.id, [owner, mod, member], { maxUses: 3 });
    const last = ok(await t.gql(CREATE, { i: { serverId: ws.id } }, p3)).createWorkspaceInvite;
    ok(await t.gql(JOIN, { t: last.token }, guest));
    const err = expectCode(await t.gql(JOIN, { t: last.token }, p1), 'VALIDATION');
    expect(err.message).toMatch(/SVC_LIMIT_MEMBERS_PER_WORKSPACE/);
    // The refused join spent no use.
    const list = ok(await t.gql(INVITES, { s: ws.id }, p3)).workspaceInvites;
    expect(list.find((i: { id: string }) => i.id === last.invite.id).uses).toBe(1);
  });

  it('refuses invites in the direct space and from outsiders', async () => {
    const ws = await createWorkspace(t, owner, 'Closed');
    expectCode(await t.gql(CREATE, { i: { serverId: ws.id } }, p1), 'NOT_FOUND');
    expectCode(
      await t.gql(CREATE, { i: { serverId: '00000000-0000-7000-8000-000000000000' } }, p1),
      'VALIDATION',
    );
    // An invite of a workspace the caller is not in is hidden like one that does not exist.
    const { id } = ok(await t.gql(CREATE, { i: { serverId: ws.id } }, owner)).createWorkspaceInvite
      .invite;
    const REVOKE = 'mutation($id: ID!) { revokeWorkspaceInvite(inviteId: $id) { id } }';
    const hidden = expectCode(await t.gql(REVOKE, { id }, p1), 'NOT_FOUND');
    const missing = expectCode(await t.gql(REVOKE, { id: newId() }, p1), 'NOT_FOUND');
    expect(hidden.message).toBe(missing.message);
    expectCode(
      await t.gql('query($s: ID!) { workspaceInvites(serverId: $s) { id } }', { s: ws.id }, p1),
      'NOT_FOUND',
    );
  });
});

describe('invite mail', () => {
  it('mails the link when email is enabled, and not when it is disabled', async () => {
    const smtp = await startSmtp();
    const on = await createTestApp({
      env: {
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_PORT: String(smtp.port),
        SVC_SMTP_FROM: 'svc@example.org',
      },
    });
    const off = await createTestApp({
      env: {
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_PORT: String(smtp.port),
        SVC_SMTP_FROM: 'svc@example.org',
        SVC_FEATURES_DISABLED: 'email',
      },
    });
    try {
      for (const [t, expectMail] of [
        [on, true],
        [off, false],
      ] as const) {
        const a = await signUpAndIn(t, { username: expectMail ? 'mailon' : 'mailoff' });
        const ws = await createWorkspace(t, a, 'Mail');
        const before = smtp.messages.length;
        const created = ok(
          await t.gql(CREATE, { i: { serverId: ws.id, email: 'friend@example.org' } }, a),
        ).createWorkspaceInvite;
        expect(created.mailed).toBe(expectMail);
        expect(created.invite).toMatchObject({ email: 'friend@example.org', maxUses: 1 });
        expect(created.link).toBe(`/invite/${created.token}`);
        if (expectMail) {
          await waitFor(() => smtp.messages.length > before);
          const mail = smtp.messages[smtp.messages.length - 1]!;
          expect(mail.to).toEqual(['friend@example.org']);
          expect(mail.raw.replace(/=\r?\n/g, '')).toContain(created.token);
        } else {
          await new Promise((r) => setTimeout(r, 200));
          expect(smtp.messages.length).toBe(before);
        }
      }
    } finally {
      await on.close();
      await off.close();
      await smtp.close();
    }
  });
});
