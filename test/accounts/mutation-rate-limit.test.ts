import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { agentHeaders, createTestApp, setCookies, type Agent, type TestApp } from '../_util/app.js';

import { expectCode, ok } from './_helpers.js';

type Body = {
  data?: Record<string, any> | null;
  errors?: Array<{ message: string; extensions?: Record<string, any> }>;
};

// The limiter refills continuously (5 per minute, one token every 12 s); each test uses fresh
// sessions or addresses so it starts from a full bucket, and finishes well inside 12 s.
const LIMIT = 5;

describe('SVC_RATE_MUTATIONS_PER_MIN_PER_SESSION', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: {
        SVC_RATE_MUTATIONS_PER_MIN_PER_SESSION: String(LIMIT),
        SVC_TRUST_FORWARDED_HEADERS: 'true',
      },
    });
    for (const username of ['alice', 'bob']) {
      await t.ctx.services.accounts.createPasswordAccount({
        username,
        password: 'correct horse battery staple',
      });
    }
  });
  afterAll(async () => t?.close());

  // Signing in is a mutation too, counted against the address: each from an address of its own.
  let n = 0;
  async function fresh(username = 'alice'): Promise<Agent> {
    const res = await t.gql(
      'mutation($u: String!) { login(input: { username: $u, password: "correct horse battery staple" }) { csrfToken user { id } } }',
      { u: username },
      null,
      { 'x-forwarded-for': `198.51.100.${++n}` },
    );
    const { csrfToken, user } = ok(res).login;
    const cookies = setCookies(res.response);
    return {
      id: user.id,
      username,
      cookies: { svc_session: cookies.svc_session!.value, svc_csrf: cookies.svc_csrf!.value },
      csrfToken,
    };
  }
  const name = async (agent: Agent) =>
    ok(await t.gql('{ me { displayName } }', {}, agent)).me.displayName as string | null;
  const rename = (n: string, alias = 'a') =>
    `${alias}: updateProfile(input: { displayName: "${n}" }) { displayName }`;

  const expectLimited = (body: Body) => {
    expect(body.data ?? undefined).toBeUndefined();
    expect(body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(body.errors?.[0]?.extensions?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  };

  it('counts every alias, and runs nothing of a request over the limit', async () => {
    const agent = await fresh();
    const three = `mutation { ${rename('one', 'a')} ${rename('two', 'b')} ${rename('three', 'c')} }`;
    ok(await t.gql(three, {}, agent));
    expect(await name(agent)).toBe('three');
    const more = `mutation { ${rename('four', 'a')} ${rename('five', 'b')} ${rename('six', 'c')} }`;
    const res = await t.gql(more, {}, agent);
    expectLimited(res.body);
    expect(await name(agent)).toBe('three');
    // What is left (2) still passes; queries never count.
    ok(await t.gql(`mutation { ${rename('seven', 'a')} ${rename('eight', 'b')} }`, {}, agent));
    expectCode(await t.gql('mutation { ping }', {}, agent), 'RATE_LIMITED');
    ok(await t.gql('{ me { id } }', {}, agent));
  });

  it('counts a fragment spread twice as two', async () => {
    const agent = await fresh();
    const doc = 'mutation { ...F ...F ...F } fragment F on Mutation { ping }';
    ok(await t.gql(doc, {}, agent)); // 3
    expectLimited((await t.gql(doc, {}, agent)).body); // 3 more: 6 > 5
    ok(
      await t.gql(
        'mutation { ... on Mutation { ping } ...F } fragment F on Mutation { ping }',
        {},
        agent,
      ),
    );
    expectCode(await t.gql('mutation { ping }', {}, agent), 'RATE_LIMITED');
  });

  it('counts a whole batch before running any of it', async () => {
    const agent = await fresh();
    const before = await name(agent);
    const res = await t.inject({
      method: 'POST',
      url: '/api',
      headers: { 'content-type': 'application/json', ...agentHeaders(agent) },
      payload: JSON.stringify([
        { query: `mutation { ${rename('batch-1', 'a')} ${rename('batch-2', 'b')} }` },
        { query: '{ me { id } }' },
        {
          query: `mutation { ${rename('batch-3', 'a')} ${rename('batch-4', 'b')} ping ping2: ping }`,
        },
      ]),
    });
    const answers = res.json() as Body[];
    expect(answers).toHaveLength(3);
    for (const a of answers) expectLimited(a);
    expect(await name(agent)).toBe(before);
  });

  it('keeps one bucket per session', async () => {
    const first = await fresh('bob');
    const second = await fresh('bob');
    const five = `mutation { ${[1, 2, 3, 4, 5].map((i) => `p${i}: ping`).join(' ')} }`;
    ok(await t.gql(five, {}, first));
    expectCode(await t.gql('mutation { ping }', {}, first), 'RATE_LIMITED');
    ok(await t.gql(five, {}, second));
  });

  it('counts requests without a session against their address', async () => {
    const reset = (i: number) =>
      `r${i}: requestPasswordReset(input: { emailOrUsername: "nobody${i}" })`;
    const address = { 'x-forwarded-for': '203.0.113.9' };
    ok(await t.gql(`mutation { ${reset(1)} ${reset(2)} ${reset(3)} }`, {}, null, address));
    ok(await t.gql(`mutation { ${reset(4)} ${reset(5)} }`, {}, null, address));
    const over = await t.gql(`mutation { ${reset(6)} }`, {}, null, address);
    expectLimited(over.body);
    // Another address has its own bucket; a dead cookie is still anonymous.
    ok(await t.gql(`mutation { ${reset(7)} }`, {}, null, { 'x-forwarded-for': '203.0.113.10' }));
    const dead = await t.inject({
      method: 'POST',
      url: '/api',
      headers: { 'content-type': 'application/json', cookie: 'svc_session=dead', ...address },
      payload: JSON.stringify({ query: `mutation { ${reset(8)} }` }),
    });
    expectLimited(dead.json() as Body);
  });
});
