import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS, ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { leadingZeroBits, powHash, solvePow } from '../../src/services/registration/pow.js';
import { createTestApp, setCookies, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { cli } from '../cli/cli-io.js';
import { SIGNUP_WITH_KEY, signupInput } from '../devices/_keys.js';

import { CHALLENGE, CREATE_INVITE, PASSWORD, SIGNUP, expectCode, ok } from './_helpers.js';

const PASSWORD_SIGNUPS = { SVC_SIGNUP_REQUIRE_KEYS: 'false' };

describe('signupWithInvite while signups need keys (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_OPEN_REGISTRATION: 'true' } });
  });
  afterAll(async () => t?.close());

  it('is refused with FORBIDDEN, even on an open server, and creates nothing', async () => {
    const res = await t.gql(SIGNUP, { input: { username: 'keyless', password: PASSWORD } });
    expectCode(res, 'FORBIDDEN');
    const rows = await t.ctx.db.kysely.selectFrom('account').select('id').execute();
    expect(rows).toHaveLength(0);
    const info = await t.gql('{ serverInfo { signupRequiresKeys openRegistration } }');
    expect(ok(info).serverInfo).toEqual({ signupRequiresKeys: true, openRegistration: true });
  });
});

describe('signupWithInvite with instance invites (closed registration)', () => {
  let t: TestApp;
  let operator: Agent;
  let member: Agent;
  const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));

  beforeAll(async () => {
    t = await createTestApp({ clock, env: PASSWORD_SIGNUPS });
    operator = await signUpAndIn(t, { username: 'oper', operator: true });
    member = await signUpAndIn(t, { username: 'plain' });
  });
  afterAll(async () => t?.close());

  const invite = async (vars: { email?: string; days?: number; uses?: number } = {}) =>
    ok(await t.gql(CREATE_INVITE, vars, operator)).createInstanceInvite as {
      token: string;
      invite: { id: string; email: string | null; maxUses: number; uses: number };
    };

  it('needs an invite: none is VALIDATION, an unknown one INVALID_TOKEN', async () => {
    expectCode(
      await t.gql(SIGNUP, { input: { username: 'nobody', password: PASSWORD } }),
      'VALIDATION',
    );
    expectCode(
      await t.gql(SIGNUP, {
        input: { username: 'nobody', password: PASSWORD, inviteToken: 'made-up' },
      }),
      'INVALID_TOKEN',
    );
  });

  it('lets only instance operators create invites', async () => {
    expectCode(await t.gql(CREATE_INVITE, {}, member), 'FORBIDDEN');
    expectCode(await t.gql('{ instanceInvites { id } }', {}, member), 'FORBIDDEN');
    expectCode(await t.gql('{ instanceInvites { id } }'), 'UNAUTHENTICATED');
    const created = await invite();
    expect(created.invite).toMatchObject({ email: null, maxUses: 1, uses: 0 });
    const listed = ok(await t.gql('{ instanceInvites { id createdBy expiresAt } }', {}, operator));
    expect(listed.instanceInvites[0]).toEqual({
      id: created.invite.id,
      createdBy: operator.id,
      expiresAt: new Date(clock.now().getTime() + 7 * DAY_MS).toISOString(),
    });
    // The token is never stored.
    const row = await t.ctx.db.kysely
      .selectFrom('instance_invite')
      .selectAll()
      .where('id', '=', created.invite.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(created.token);
  });

  it('signs the new account in, and the invite is then used up', async () => {
    const { token, invite: inv } = await invite();
    const res = await t.gql(SIGNUP, {
      input: { username: 'Newcomer', password: PASSWORD, inviteToken: token, displayName: 'New' },
    });
    const payload = ok(res).signupWithInvite;
    expect(payload.user).toMatchObject({ username: 'Newcomer', email: null, displayName: 'New' });
    expect(payload.serverId).toBeNull();
    const cookies = setCookies(res.response);
    expect(cookies.svc_csrf!.value).toBe(payload.csrfToken);
    const agent: Agent = {
      id: payload.user.id,
      username: 'Newcomer',
      cookies: { svc_session: cookies.svc_session!.value, svc_csrf: cookies.svc_csrf!.value },
      csrfToken: payload.csrfToken,
    };
    expect(ok(await t.gql('{ me { id } }', {}, agent)).me.id).toBe(payload.user.id);
    expect(ok(await t.gql('mutation { ping }', {}, agent)).ping).toBe(true);

    const again = await t.gql(SIGNUP, {
      input: { username: 'second', password: PASSWORD, inviteToken: token },
    });
    expectCode(again, 'INVALID_TOKEN');
    const listed = ok(await t.gql('{ instanceInvites { id uses } }', {}, operator));
    expect(listed.instanceInvites.find((i: { id: string }) => i.id === inv.id).uses).toBe(1);
  });

  it('spends nothing when the signup fails later (username taken)', async () => {
    const { token, invite: inv } = await invite();
    const taken = await t.gql(SIGNUP, {
      input: { username: 'NEWCOMER', password: PASSWORD, inviteToken: token },
    });
    expectCode(taken, 'CONFLICT');
    const row = await t.ctx.db.kysely
      .selectFrom('instance_invite')
      .select('uses')
      .where('id', '=', inv.id)
      .executeTakeFirstOrThrow();
    expect(row.uses).toBe(0);
    ok(
      await t.gql(SIGNUP, { input: { username: 'later', password: PASSWORD, inviteToken: token } }),
    );
  });

  it('allows maxUses signups', async () => {
    const { token } = await invite({ uses: 2 });
    for (const username of ['twin1', 'twin2']) {
      ok(await t.gql(SIGNUP, { input: { username, password: PASSWORD, inviteToken: token } }));
    }
    expectCode(
      await t.gql(SIGNUP, { input: { username: 'twin3', password: PASSWORD, inviteToken: token } }),
      'INVALID_TOKEN',
    );
  });

  it('refuses a revoked invite with INVALID_TOKEN', async () => {
    const { token, invite: inv } = await invite();
    const revoke = 'mutation($id: ID!) { revokeInstanceInvite(id: $id) }';
    expectCode(await t.gql(revoke, { id: inv.id }, member), 'FORBIDDEN');
    expect(ok(await t.gql(revoke, { id: inv.id }, operator)).revokeInstanceInvite).toBe(true);
    expect(ok(await t.gql(revoke, { id: inv.id }, operator)).revokeInstanceInvite).toBe(false);
    expectCode(await t.gql(revoke, { id: newId() }, operator), 'NOT_FOUND');
    expectCode(
      await t.gql(SIGNUP, {
        input: { username: 'revoked', password: PASSWORD, inviteToken: token },
      }),
      'INVALID_TOKEN',
    );
  });

  it('refuses an expired invite with EXPIRED_TOKEN', async () => {
    const { token } = await invite({ days: 1 });
    clock.advance(DAY_MS + 1);
    expectCode(
      await t.gql(SIGNUP, {
        input: { username: 'toolate', password: PASSWORD, inviteToken: token },
      }),
      'EXPIRED_TOKEN',
    );
  });

  it('gives an email-bound invite its address, refuses another, and EMAIL_TAKEN once used', async () => {
    const first = await invite({ email: 'Bound@Example.org' });
    expectCode(
      await t.gql(SIGNUP, {
        input: {
          username: 'bound',
          password: PASSWORD,
          inviteToken: first.token,
          email: 'other@example.org',
        },
      }),
      'VALIDATION',
    );
    const res = await t.gql(SIGNUP, {
      input: { username: 'bound', password: PASSWORD, inviteToken: first.token },
    });
    expect(ok(res).signupWithInvite.user.email).toBe('Bound@Example.org');

    // Creating another invite for a taken address is refused at once...
    expectCode(await t.gql(CREATE_INVITE, { email: 'bound@example.org' }, operator), 'EMAIL_TAKEN');
    // ...and an open invite asking for a taken address is refused at signup.
    const open = await invite();
    expectCode(
      await t.gql(SIGNUP, {
        input: {
          username: 'copycat',
          password: PASSWORD,
          inviteToken: open.token,
          email: 'BOUND@example.org',
        },
      }),
      'EMAIL_TAKEN',
    );
  });

  it('takes a workspace invite too, naming its workspace as serverId', async () => {
    const ws = ok(
      await t.gql('mutation { createWorkspace(input: { name: "Guild" }) { id } }', {}, member),
    ).createWorkspace.id as string;
    const created = ok(
      await t.gql(
        'mutation($s: ID!) { createWorkspaceInvite(input: { serverId: $s, maxUses: 1 }) { token } }',
        { s: ws },
        member,
      ),
    ).createWorkspaceInvite.token as string;
    const res = await t.gql(SIGNUP, {
      input: { username: 'guildling', password: PASSWORD, inviteToken: created },
    });
    const payload = ok(res).signupWithInvite;
    expect(payload.serverId).toBe(ws);
    const row = await t.ctx.db.kysely
      .selectFrom('workspace_member')
      .select('role')
      .where('workspaceId', '=', ws)
      .where('accountId', '=', payload.user.id)
      .executeTakeFirst();
    expect(row?.role).toBe('member');
    // Used up: the next signup with it is refused and leaves no account.
    expectCode(
      await t.gql(SIGNUP, {
        input: { username: 'guildling2', password: PASSWORD, inviteToken: created },
      }),
      'INVALID_TOKEN',
    );
    const left = await t.ctx.db.kysely
      .selectFrom('account')
      .select('id')
      .where('usernameKey', '=', 'guildling2')
      .execute();
    expect(left).toHaveLength(0);
  });

  it('refuses bad invite parameters with VALIDATION', async () => {
    for (const vars of [{ days: 0 }, { days: 366 }, { uses: 0 }, { uses: 1001 }, { email: 'x' }]) {
      expectCode(await t.gql(CREATE_INVITE, vars, operator), 'VALIDATION');
    }
  });

  it('works from the command line too', async () => {
    // The command line reads the system clock.
    clock.set(Date.now());
    const env = t.database.env;
    const created = await cli(
      [
        'invite',
        'create',
        '--email',
        'cli@example.org',
        '--max-uses',
        '1',
        '--expires-in-days',
        '2',
      ],
      env,
    );
    expect(created.code, created.err).toBe(0);
    const out = JSON.parse(created.out) as { id: string; token: string; createdBy: string };
    expect(out.createdBy).toBe('cli');
    const res = await t.gql(SIGNUP, {
      input: { username: 'fromcli', password: PASSWORD, inviteToken: out.token },
    });
    expect(ok(res).signupWithInvite.user.email).toBe('cli@example.org');
    const listed = await cli(['invite', 'list'], env);
    expect(JSON.parse(listed.out).find((i: { id: string }) => i.id === out.id).uses).toBe(1);
    const revoked = await cli(['invite', 'revoke', out.id], env);
    expect(JSON.parse(revoked.out)).toEqual({ id: out.id, revoked: true });
    // The command line and the operators' mutations write the same audit rows.
    const audit = await t.ctx.db.kysely
      .selectFrom('audit_log')
      .select(['action', 'actorId', 'target'])
      .where('target', 'like', 'instance_invite:%')
      .execute();
    expect(audit).toContainEqual({
      action: 'instance_invite.create',
      actorId: 'cli',
      target: `instance_invite:${out.id}`,
    });
    expect(audit).toContainEqual({
      action: 'instance_invite.revoke',
      actorId: 'cli',
      target: `instance_invite:${out.id}`,
    });
    expect(audit).toContainEqual(
      expect.objectContaining({ action: 'instance_invite.create', actorId: operator.id }),
    );
    expect((await cli(['invite', 'create', '--max-uses', 'many'], env)).code).toBe(2);
  });
});

describe('open registration with proof of work', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
  const BITS = 8;
  beforeAll(async () => {
    t = await createTestApp({
      clock,
      env: {
        ...PASSWORD_SIGNUPS,
        SVC_OPEN_REGISTRATION: 'true',
        SVC_REGISTRATION_POW_BITS: String(BITS),
      },
    });
  });
  afterAll(async () => t?.close());

  const challenge = async () =>
    ok(await t.gql(CHALLENGE)).registrationChallenge as {
      challengeId: string;
      salt: string;
      bits: number;
      expiresAt: string;
    };

  it('asks for a solved challenge and takes it once', async () => {
    const info = ok(await t.gql('{ serverInfo { registrationPowBits openRegistration } }'));
    expect(info.serverInfo).toEqual({ registrationPowBits: BITS, openRegistration: true });
    expectCode(
      await t.gql(SIGNUP, { input: { username: 'nopow', password: PASSWORD } }),
      'VALIDATION',
    );
    const c = await challenge();
    expect(c.bits).toBe(BITS);
    expect(Date.parse(c.expiresAt)).toBe(clock.now().getTime() + 30 * MINUTE_MS);
    const nonce = solvePow(c.salt, c.bits);
    const pow = { challengeId: c.challengeId, nonce };
    ok(await t.gql(SIGNUP, { input: { username: 'worker', password: PASSWORD, pow } }));
    const replay = await t.gql(SIGNUP, {
      input: { username: 'replayer', password: PASSWORD, pow },
    });
    expectCode(replay, 'VALIDATION');
    expect(replay.body.errors?.[0]?.message).toMatch(/used already/);
  });

  it('refuses a wrong nonce, a forged challenge and an expired one', async () => {
    const c = await challenge();
    const nonce = solvePow(c.salt, c.bits);
    // A nonce that misses the target.
    let wrong = 0;
    while (leadingZeroBits(powHash(c.salt, String(wrong))) >= c.bits) wrong++;
    const bad = [
      { challengeId: c.challengeId, nonce: String(wrong) },
      { challengeId: c.challengeId.replace(/\.p?[^.]+$/, '.AAAA'), nonce },
      { challengeId: c.challengeId.replace(`.${BITS}.`, '.1.'), nonce },
      { challengeId: 'nonsense', nonce },
      { challengeId: c.challengeId, nonce: 'not allowed!' },
      { challengeId: c.challengeId, nonce: 'x'.repeat(65) },
    ];
    for (const pow of bad) {
      const res = await t.gql(SIGNUP, { input: { username: 'forger', password: PASSWORD, pow } });
      expectCode(res, 'VALIDATION');
    }
    clock.advance(30 * MINUTE_MS);
    const expired = await t.gql(SIGNUP, {
      input: {
        username: 'sleeper',
        password: PASSWORD,
        pow: { challengeId: c.challengeId, nonce },
      },
    });
    expectCode(expired, 'VALIDATION');
    expect(expired.body.errors?.[0]?.message).toMatch(/expired/);
    // The record of the spent challenge outlives it only until the hourly job.
    const spent = () => t.ctx.db.kysely.selectFrom('registration_pow_use').selectAll().execute();
    expect(await spent()).toHaveLength(1);
    clock.advance(1);
    await t.ctx.scheduler.runOnce('registration-prune');
    expect(await spent()).toHaveLength(0);
  });

  it('needs no session or CSRF for the challenge (a query)', async () => {
    const res = await t.gql(CHALLENGE);
    expect(res.body.errors).toBeUndefined();
  });
});

describe('terms, default workspace and probation', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
  const TERMS = 'https://example.org/terms?v=3';
  const WORKSPACE = newId();
  const channels = { general: newId(), secret: newId(), random: newId() };

  beforeAll(async () => {
    t = await createTestApp({
      clock,
      env: {
        ...PASSWORD_SIGNUPS,
        SVC_OPEN_REGISTRATION: 'true',
        SVC_TERMS_URL: TERMS,
        SVC_DEFAULT_WORKSPACE: WORKSPACE,
        SVC_PROBATION_HOURS: '2',
      },
    });
    const owner = await t.ctx.services.accounts.createPasswordAccount({
      username: 'owner',
      password: PASSWORD,
    });
    const now = clock.now().getTime();
    const db = t.ctx.db.kysely;
    await db
      .insertInto('workspace')
      .values({
        id: WORKSPACE,
        name: 'Lobby',
        description: null,
        ownerId: owner.id,
        isDirect: 0,
        createdAt: now,
        updatedAt: now,
      })
      .execute();
    await db
      .insertInto('workspace_member')
      .values({
        workspaceId: WORKSPACE,
        accountId: owner.id,
        role: 'owner',
        joinedAt: now,
        timedOutUntil: null,
      })
      .execute();
    for (const [name, id] of Object.entries(channels)) {
      await db
        .insertInto('conversation')
        .values({
          id,
          workspaceId: WORKSPACE,
          kind: 'channel',
          name,
          topic: null,
          isPrivate: name === 'secret' ? 1 : 0,
          encrypted: 0,
          archivedAt: null,
          createdBy: owner.id,
          createdAt: now,
          lastActivityAt: now,
        })
        .execute();
    }
  });
  afterAll(async () => t?.close());

  it('refuses a signup without the terms URL or with another one', async () => {
    for (const acceptedTermsUrl of [undefined, 'https://example.org/terms', `${TERMS} `]) {
      const res = await t.gql(SIGNUP, {
        input: { username: 'skimmer', password: PASSWORD, acceptedTermsUrl },
      });
      expectCode(res, 'VALIDATION');
    }
    const n = await t.ctx.db.kysely
      .selectFrom('account')
      .select('id')
      .where('usernameKey', '=', 'skimmer')
      .execute();
    expect(n).toHaveLength(0);
  });

  it('records the acceptance with its time and joins the default workspace first', async () => {
    const res = await t.gql(SIGNUP, {
      input: { username: 'reader', password: PASSWORD, acceptedTermsUrl: TERMS },
    });
    const { user } = ok(res).signupWithInvite;
    const db = t.ctx.db.kysely;
    const row = await db
      .selectFrom('account')
      .select(['acceptedTermsUrl', 'acceptedTermsAt'])
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ acceptedTermsUrl: TERMS, acceptedTermsAt: clock.now().getTime() });
    const member = await db
      .selectFrom('workspace_member')
      .select('role')
      .where('workspaceId', '=', WORKSPACE)
      .where('accountId', '=', user.id)
      .executeTakeFirst();
    expect(member?.role).toBe('member');
    const joined = await db
      .selectFrom('conversation_member')
      .select('conversationId')
      .where('accountId', '=', user.id)
      .execute();
    expect(joined.map((r) => r.conversationId).sort()).toEqual(
      [channels.general, channels.random].sort(),
    );
  });

  it('holds a key signup to the same terms and joins it to the default workspace first', async () => {
    const other = await signupInput(t, { extra: { acceptedTermsUrl: `${TERMS}&v=4` } });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: other.input }), 'VALIDATION');
    const none = await signupInput(t);
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: none.input }), 'VALIDATION');
    const good = await signupInput(t, { extra: { acceptedTermsUrl: TERMS } });
    const { user } = ok(await t.gql(SIGNUP_WITH_KEY, { input: good.input })).signupWithKey;
    const db = t.ctx.db.kysely;
    const row = await db
      .selectFrom('account')
      .select(['acceptedTermsUrl', 'acceptedTermsAt'])
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ acceptedTermsUrl: TERMS, acceptedTermsAt: clock.now().getTime() });
    const member = await db
      .selectFrom('workspace_member')
      .select('role')
      .where('workspaceId', '=', WORKSPACE)
      .where('accountId', '=', user.id)
      .executeTakeFirst();
    expect(member?.role).toBe('member');
    const joined = await db
      .selectFrom('conversation_member')
      .select('conversationId')
      .where('accountId', '=', user.id)
      .execute();
    expect(joined.map((r) => r.conversationId).sort()).toEqual(
      [channels.general, channels.random].sort(),
    );
  });

  it('reports probation on me until it is over', async () => {
    const res = await t.gql(SIGNUP, {
      input: { username: 'rookie', password: PASSWORD, acceptedTermsUrl: TERMS },
    });
    const cookies = setCookies(res.response);
    const agent: Agent = {
      id: ok(res).signupWithInvite.user.id,
      username: 'rookie',
      cookies: { svc_session: cookies.svc_session!.value, svc_csrf: cookies.svc_csrf!.value },
      csrfToken: ok(res).signupWithInvite.csrfToken,
    };
    const createdAt = clock.now().getTime();
    const me = ok(await t.gql('{ me { probationEndsAt createdAt } }', {}, agent)).me;
    expect(me.probationEndsAt).toBe(new Date(createdAt + 2 * 3600_000).toISOString());
    const limits = ok(await t.gql('{ serverInfo { limits { probationHours } } }'));
    expect(limits.serverInfo.limits.probationHours).toBe(2);
    clock.advance(2 * 3600_000 - 1);
    expect(
      ok(await t.gql('{ me { probationEndsAt } }', {}, agent)).me.probationEndsAt,
    ).not.toBeNull();
    clock.advance(1);
    expect(ok(await t.gql('{ me { probationEndsAt } }', {}, agent)).me.probationEndsAt).toBeNull();
  });
});
