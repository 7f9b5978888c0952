import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { agentHeaders, createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { BACKGROUND, recordQueries } from '../conversations/_helpers.js';

// `me` answers from the account read together with the session (one statement per request), but
// only while that read is current: not after an earlier operation of the same batch changed it.
describe(`me (${TEST_DB})`, () => {
  let t: TestApp;
  let ann: Agent;

  beforeAll(async () => {
    t = await createTestApp();
    ann = await signUpAndIn(t, { username: 'annme' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const batch = async (queries: string[]) => {
    const res = await t.inject({
      method: 'POST',
      url: '/api',
      headers: { 'content-type': 'application/json', ...agentHeaders(ann) },
      payload: JSON.stringify(queries.map((query) => ({ query }))),
    });
    return res.json() as Array<{ data?: Record<string, any>; errors?: unknown[] }>;
  };

  it('costs the session read alone, and answers every field of the account', async () => {
    let body: Record<string, any> = {};
    const texts = await recordQueries(async () => {
      body = (
        await t.gql(
          '{ me { id username displayName email createdAt instanceOperator deletionScheduledFor avatarUrl } }',
          {},
          ann,
        )
      ).body;
    });
    expect(body.errors).toBeUndefined();
    expect(body.data.me).toMatchObject({ id: ann.id, username: 'annme', instanceOperator: false });
    // A tick of the server's periodic work inside the window is not the request's cost.
    const own = texts.filter((text) => !BACKGROUND.test(text));
    expect(own).toHaveLength(1);
    expect(own[0]).toMatch(/from "session"/);
  });

  it('reads the account again after an earlier operation of the batch changed it', async () => {
    const answers = await batch([
      'mutation { updateProfile(input: { displayName: "Ann Renamed" }) { displayName } }',
      '{ me { displayName } }',
    ]);
    expect(answers[0]!.data!.updateProfile.displayName).toBe('Ann Renamed');
    expect(answers[1]!.data!.me.displayName).toBe('Ann Renamed');
    const [again] = await batch(['{ me { displayName } }']);
    expect(again!.data!.me.displayName).toBe('Ann Renamed');
  });
});
