import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { recordQueries } from '../conversations/_helpers.js';

// Every request reads its session afresh (never cached: a revoked session is refused on the very
// next request). On PostgreSQL the sessions of requests that arrive together are read in one
// statement (src/db/statements/batched-reads.ts); on SQLite a read costs no round trip and each request
// makes its own.
describe(`session reads of requests that arrive together (${TEST_DB})`, () => {
  let t: TestApp;
  let people: Agent[];

  beforeAll(async () => {
    t = await createTestApp();
    people = [];
    for (let i = 0; i < 6; i++) people.push(await signUpAndIn(t, { username: `reader${i}` }));
  });
  afterAll(async () => {
    await t?.close();
  });

  const meOfAll = () =>
    Promise.all(people.map((p) => t.gql('{ me { id username } }', {}, p).then((r) => r.body)));

  it('answers each request with its own account', async () => {
    let bodies: Array<Record<string, any>> = [];
    const texts = await recordQueries(async () => {
      bodies = await meOfAll();
    });
    expect(bodies.map((b) => b.data?.me?.id)).toEqual(people.map((p) => p.id));
    const sessionReads = texts.filter((s) => /from "session"/.test(s));
    if (TEST_DB === 'postgres') expect(sessionReads.length).toBeLessThan(people.length);
    else expect(sessionReads).toHaveLength(people.length);
  });

  it('refuses a session ended before the request, while the others of its batch go on', async () => {
    const ended = people[2]!;
    const out = await t.gql('mutation { logout }', {}, ended);
    expect(out.body.errors).toBeUndefined();
    const bodies = await meOfAll();
    bodies.forEach((b, i) => {
      if (i === 2) {
        expect(b.data?.me ?? null).toBeNull();
      } else {
        expect(b.errors).toBeUndefined();
        expect(b.data?.me.id).toBe(people[i]!.id);
      }
    });
    people.splice(2, 1);
  });

  it('refuses a session ended by another request of the same moment from then on', async () => {
    const leaving = people[0]!;
    // The logout and the others' requests race; once the logout answered, its session is dead.
    const [out] = await Promise.all([t.gql('mutation { logout }', {}, leaving), meOfAll()]);
    expect(out.body.errors).toBeUndefined();
    const after = await t.gql('{ me { id } }', {}, leaving);
    expect(after.body.data?.me ?? null).toBeNull();
  });
});
