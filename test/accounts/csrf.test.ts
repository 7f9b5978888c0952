import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signIn, signUpAndIn } from '../_util/seed.js';

import { ok } from './_helpers.js';

type Body = {
  data?: Record<string, any> | null;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
};

describe('CSRF over POST /api', () => {
  let t: TestApp;
  let alice: Agent;
  let bob: Agent;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await signUpAndIn(t, { username: 'alice' });
    bob = await signUpAndIn(t, { username: 'bob' });
  });
  afterAll(async () => t?.close());

  /** POSTs a raw body with exactly these cookies and headers. */
  async function post(
    body: unknown,
    opts: { cookies?: Record<string, string>; header?: string | null } = {},
  ): Promise<Body | Body[]> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (opts.cookies && Object.keys(opts.cookies).length > 0) {
      headers.cookie = Object.entries(opts.cookies)
        .map(([k, v]) => `${k}=${v}`)
        .join('; ');
    }
    if (opts.header) headers['x-csrf-token'] = opts.header;
    const res = await t.inject({
      method: 'POST',
      url: '/api',
      headers,
      payload: JSON.stringify(body),
    });
    expect(res.statusCode).toBe(200);
    return res.json();
  }

  // The refusal comes first; a document that could not have run anyway also says why. No error
  // of a refused request carries a code.
  const refused = (body: Body) => {
    expect(body.data).toBeUndefined();
    expect(body.errors![0]!.message).toMatch(/csrf validation failed/);
    for (const e of body.errors!) {
      expect(e.extensions?.code).toBeUndefined();
      expect(e.extensions?.request_id).toEqual(expect.any(String));
    }
  };
  const notRefused = (body: Body) => {
    for (const e of body.errors ?? []) expect(e.message).not.toMatch(/csrf/);
  };
  const displayName = async (agent: Agent) =>
    ok(await t.gql('{ me { displayName } }', {}, agent)).me.displayName as string | null;
  const setName = (name: string) =>
    `mutation { updateProfile(input: { displayName: "${name}" }) { displayName } }`;

  it('accepts a header equal to the cookie and bound to the session', async () => {
    const body = (await post(
      { query: setName('Ok') },
      { cookies: alice.cookies, header: alice.csrfToken },
    )) as Body;
    expect(body.data?.updateProfile.displayName).toBe('Ok');
  });

  it('refuses a missing header, a missing cookie, and a header that differs from the cookie', async () => {
    const cases: Array<{ cookies: Record<string, string>; header: string | null }> = [
      { cookies: alice.cookies, header: null },
      { cookies: { svc_session: alice.cookies.svc_session! }, header: alice.csrfToken },
      { cookies: alice.cookies, header: `${alice.csrfToken}x` },
      { cookies: { ...alice.cookies, svc_csrf: 'forged' }, header: alice.csrfToken },
      { cookies: { svc_csrf: alice.csrfToken }, header: alice.csrfToken },
      { cookies: {}, header: null },
    ];
    for (const opts of cases) refused((await post({ query: setName('Forged') }, opts)) as Body);
    expect(await displayName(alice)).toBe('Ok');
  });

  it("refuses another session's token even when header and cookie agree", async () => {
    const mixed = { ...alice.cookies, svc_csrf: bob.csrfToken };
    refused(
      (await post({ query: setName('Mixed') }, { cookies: mixed, header: bob.csrfToken })) as Body,
    );
    // Also a token of another session of the same account.
    const second = await signIn(t, 'alice');
    const same = { ...alice.cookies, svc_csrf: second.csrfToken };
    refused(
      (await post(
        { query: setName('Mixed') },
        { cookies: same, header: second.csrfToken },
      )) as Body,
    );
    expect(await displayName(alice)).toBe('Ok');
  });

  it('lets exempt mutations through without the header, with or without a session', async () => {
    const exempt = [
      'mutation { requestPasswordReset(input: { emailOrUsername: "nobody" }) }',
      'mutation { resetPassword(input: { token: "nope", newPassword: "whatever you like" }) }',
      'mutation { signupWithInvite(input: { username: "newbie", password: "whatever you like" }) { csrfToken } }',
      'mutation { login(input: { username: "nobody", password: "whatever" }) { csrfToken } }',
      'mutation { keyLoginChallenge { challengeId } }',
      'mutation { __typename }',
    ];
    for (const query of exempt) {
      notRefused((await post({ query }, { cookies: alice.cookies })) as Body);
      notRefused((await post({ query })) as Body);
    }
    // Queries never need it.
    const q = (await post({ query: '{ me { id } }' }, { cookies: alice.cookies })) as Body;
    expect(q.data?.me.id).toBe(alice.id);
  });

  it('exempts rotateIdentityKey and cancelDeviceLink only without a session cookie', async () => {
    for (const query of [
      'mutation { rotateIdentityKey(input: {}) { __typename } }',
      'mutation { cancelDeviceLink(input: {}) }',
    ]) {
      notRefused((await post({ query })) as Body);
      refused((await post({ query }, { cookies: alice.cookies })) as Body);
      // Even a dead session cookie counts as carrying one.
      refused((await post({ query }, { cookies: { svc_session: 'dead' } })) as Body);
    }
  });

  it('counts every root field, through fragments and under @skip', async () => {
    const docs = [
      'mutation { logout ping }',
      'mutation { logout ...F } fragment F on Mutation { ping }',
      'mutation { logout ... on Mutation { ... on Mutation { ping } } }',
      'mutation { logout ping @skip(if: true) }',
      'mutation { logout ...F @include(if: false) } fragment F on Mutation { ping }',
      'mutation { ...A } fragment A on Mutation { ...B } fragment B on Mutation { logout ping }',
    ];
    for (const query of docs) refused((await post({ query }, { cookies: alice.cookies })) as Body);
    ok(await t.gql('{ me { id } }', {}, alice));
  });

  it('checks the operation operationName selects, and refuses what it cannot classify', async () => {
    const doc = 'query Q { me { id } } mutation M { ping }';
    const q = (await post({ query: doc, operationName: 'Q' }, { cookies: alice.cookies })) as Body;
    expect(q.data?.me.id).toBe(alice.id);
    refused((await post({ query: doc, operationName: 'M' }, { cookies: alice.cookies })) as Body);
    refused((await post({ query: doc }, { cookies: alice.cookies })) as Body);
    refused(
      (await post({ query: doc, operationName: 'Nope' }, { cookies: alice.cookies })) as Body,
    );
    refused((await post({ query: 'mutation { logout ' }, { cookies: alice.cookies })) as Body);
    refused((await post({ query: 'mutation { ...Missing }' }, { cookies: alice.cookies })) as Body);
    refused(
      (await post(
        {
          query:
            'mutation { ...A } fragment A on Mutation { ...B } fragment B on Mutation { ...A }',
        },
        { cookies: alice.cookies },
      )) as Body,
    );
    // 32 fragments nested in each other are classified; 33 are not.
    let deep = 'fragment F32 on Mutation { __typename }';
    for (let i = 31; i >= 0; i--) deep += ` fragment F${i} on Mutation { ...F${i + 1} }`;
    notRefused(
      (await post({ query: `mutation { ...F1 } ${deep}` }, { cookies: alice.cookies })) as Body,
    );
    refused(
      (await post({ query: `mutation { ...F0 } ${deep}` }, { cookies: alice.cookies })) as Body,
    );
  });

  it('checks a batch once, before anything runs', async () => {
    const victim = await signIn(t, 'alice');
    const batch = [
      { query: 'mutation { logout }' },
      { query: '{ me { id } }' },
      { query: setName('Batched') },
    ];
    const answers = (await post(batch, { cookies: victim.cookies })) as Body[];
    expect(answers).toHaveLength(3);
    for (const a of answers) refused(a);
    // Nothing ran: the session was not ended and the name not changed.
    ok(await t.gql('{ me { id } }', {}, victim));
    expect(await displayName(alice)).toBe('Ok');

    const fine = (await post(batch, {
      cookies: victim.cookies,
      header: victim.csrfToken,
    })) as Body[];
    expect(fine.map((a) => a.errors)).toEqual([undefined, undefined, undefined]);
    expect(await displayName(alice)).toBe('Batched');

    const exemptOnly = (await post([{ query: '{ me { id } }' }, { query: 'mutation { logout }' }], {
      cookies: alice.cookies,
    })) as Body[];
    expect(exemptOnly[1]!.data?.logout).toBe(true);
    alice = await signIn(t, 'alice');
  });

  it('does not let an anonymous batch run a non-exempt mutation beside login', async () => {
    const before = await t.ctx.db.kysely.selectFrom('session').select('id').execute();
    const res = (await post([
      {
        query:
          'mutation { login(input: { username: "bob", password: "correct horse battery staple" }) { csrfToken } }',
      },
      { query: 'mutation { ping }' },
    ])) as Body[];
    for (const a of res) refused(a);
    const after = await t.ctx.db.kysely.selectFrom('session').select('id').execute();
    expect(after).toHaveLength(before.length);
  });

  // A token's digests are kept (SessionService `digests`): what a request seen before is told must
  // not change, nor outlive its session.
  it('answers a token seen before as the first time, and refuses it once its session ended', async () => {
    const carol = await signUpAndIn(t, { username: 'carol' });
    for (let i = 0; i < 3; i += 1) {
      const again = (await post(
        { query: setName(`Carol ${i}`) },
        { cookies: carol.cookies, header: carol.csrfToken },
      )) as Body;
      expect(again.data?.updateProfile.displayName).toBe(`Carol ${i}`);
      refused(
        (await post(
          { query: setName('Forged') },
          { cookies: { ...carol.cookies, svc_csrf: bob.csrfToken }, header: bob.csrfToken },
        )) as Body,
      );
      refused(
        (await post(
          { query: setName('Forged') },
          {
            cookies: carol.cookies,
            header: `${carol.csrfToken.slice(0, -1)}${carol.csrfToken.endsWith('A') ? 'B' : 'A'}`,
          },
        )) as Body,
      );
    }
    expect(await displayName(carol)).toBe('Carol 2');
    notRefused(
      (await post(
        { query: 'mutation { logout }' },
        {
          cookies: carol.cookies,
          header: carol.csrfToken,
        },
      )) as Body,
    );
    const ended = (await post(
      { query: setName('After logout') },
      { cookies: carol.cookies, header: carol.csrfToken },
    )) as Body;
    notRefused(ended);
    expect(ended.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
