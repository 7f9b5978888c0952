import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import { createWorkspace, expectCode, ok, recordEvents } from './_helpers.js';
import { findMember } from '../../src/services/workspaces/queries.js';

const SIGNUP = `mutation($i: SignupWithInviteInput!) { signupWithInvite(input: $i) { serverId user { id } } }`;

describe('joining as a member (signups and the default workspace)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { SVC_LIMIT_MEMBERS_PER_WORKSPACE: '3', SVC_SIGNUP_REQUIRE_KEYS: 'false' },
    });
  });
  afterAll(async () => t?.close());

  it('joinAsMember adds a Member with the open public channels, once, under the member cap', async () => {
    const owner = await signUpAndIn(t);
    const ws = await createWorkspace(t, owner, 'Default');
    const secret = ok(
      await t.gql(
        'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }',
        { i: { serverId: ws.id, name: 'secret', isPrivate: true } },
        owner,
      ),
    ).createChannel;
    const [x, y, z] = await Promise.all([signUpAndIn(t), signUpAndIn(t), signUpAndIn(t)]);
    const rec = recordEvents(t, ws.id);
    const svc = t.ctx.services.workspaces;
    expect(
      await t.ctx.db.transaction((tx) => svc.membership.joinAsMember(tx, ws.id, x.id)),
    ).toEqual({
      joined: true,
    });
    expect(
      await t.ctx.db.transaction((tx) => svc.membership.joinAsMember(tx, ws.id, x.id)),
    ).toEqual({
      joined: false,
    });
    expect(
      await t.ctx.db.transaction((tx) => svc.membership.joinAsMember(tx, ws.id, y.id)),
    ).toEqual({
      joined: true,
    });
    expect(await findMember(t.ctx.db.kysely, ws.id, x.id)).toMatchObject({
      role: 'member',
      timedOutUntil: null,
    });
    const channels = await t.ctx.db.kysely
      .selectFrom('conversation_member')
      .select('conversationId')
      .where('accountId', '=', x.id)
      .execute();
    expect(channels).toHaveLength(2);
    expect(channels.map((c) => c.conversationId)).not.toContain(secret.id);
    expect(rec.ofType('MemberJoined').map((e) => e.payload.userId)).toEqual([x.id, y.id]);
    await expect(
      t.ctx.db.transaction((tx) => svc.membership.joinAsMember(tx, ws.id, z.id)),
    ).rejects.toThrow(/SVC_LIMIT_MEMBERS_PER_WORKSPACE/);
    expect(await findMember(t.ctx.db.kysely, ws.id, z.id)).toBeUndefined();
    rec.stop();
  });

  it('spends uses and fills the member cap exactly under concurrent joins', async () => {
    const owner = await signUpAndIn(t);
    const ws = await createWorkspace(t, owner, 'Race');
    const people = await Promise.all([1, 2, 3, 4, 5, 6].map(() => signUpAndIn(t)));
    const JOIN = 'mutation($t: String!) { joinWorkspace(token: $t) { id } }';
    const INVITE =
      'mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) { token } }';
    const once = ok(await t.gql(INVITE, { i: { serverId: ws.id, maxUses: 1 } }, owner))
      .createWorkspaceInvite.token;
    const first = await Promise.all(people.slice(0, 3).map((p) => t.gql(JOIN, { t: once }, p)));
    expect(first.filter((r) => !r.body.errors).length).toBe(1);
    for (const r of first.filter((r) => r.body.errors)) expectCode(r, 'INVALID_TOKEN');
    const open = ok(await t.gql(INVITE, { i: { serverId: ws.id } }, owner)).createWorkspaceInvite
      .token;
    const second = await Promise.all(people.slice(3).map((p) => t.gql(JOIN, { t: open }, p)));
    expect(second.filter((r) => !r.body.errors).length).toBe(1);
    for (const r of second.filter((r) => r.body.errors)) expectCode(r, 'VALIDATION');
    const count = ok(
      await t.gql(
        'query($s: ID!) { workspace(serverId: $s) { memberCount } }',
        { s: ws.id },
        owner,
      ),
    ).workspace.memberCount;
    expect(count).toBe(3);
  });

  it('signs up with a workspace invite and answers its serverId', async () => {
    const owner = await signUpAndIn(t);
    const ws = await createWorkspace(t, owner, 'Signup');
    const { token } = ok(
      await t.gql(
        'mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) { token } }',
        { i: { serverId: ws.id } },
        owner,
      ),
    ).createWorkspaceInvite;
    const res = ok(
      await t.gql(SIGNUP, {
        i: { username: 'newbyinvite', password: 'correct horse battery', inviteToken: token },
      }),
    ).signupWithInvite;
    expect(res.serverId).toBe(ws.id);
    expect(await findMember(t.ctx.db.kysely, ws.id, res.user.id)).toMatchObject({
      role: 'member',
    });
    expectCode(
      await t.gql(SIGNUP, {
        i: { username: 'nobody', password: 'correct horse battery', inviteToken: 'bogus' },
      }),
      'INVALID_TOKEN',
    );
  });
});
