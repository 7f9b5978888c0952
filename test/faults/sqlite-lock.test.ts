import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

const CREATE = 'mutation($n: String!) { createWorkspace(input: { name: $n }) { id } }';
const ME = '{ me { id } }';

describe.skipIf(TEST_DB !== 'sqlite')('SQLite write lock held by another process', () => {
  let t: TestApp;
  let agent: Agent;

  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_DATABASE_STATEMENT_TIMEOUT_MS: '500' } });
    agent = await signUpAndIn(t);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('answers TIMEOUT for writes within 5 s, keeps reading, and writes again once released', async () => {
    // Another process (the CLI, a backup tool) holds the write lock.
    const other = new Sqlite(t.ctx.db.file!);
    other.exec('begin immediate');
    try {
      const started = Date.now();
      const writes = await Promise.all(
        Array.from({ length: 40 }, (_, i) => t.gql(CREATE, { n: `locked ${i}` }, agent)),
      );
      expect(Date.now() - started).toBeLessThan(5000);
      for (const res of writes) {
        expect(res.body.errors?.[0]?.extensions).toMatchObject({
          code: 'TIMEOUT',
          request_id: expect.any(String),
        });
      }
      const read = await t.gql(ME, {}, agent);
      expect(read.body.data?.me?.id).toBe(agent.id);
      expect(t.logs.lines.find((l) => l.msg === 'database failed')).toMatchObject({
        cause: { code: expect.stringMatching(/^SQLITE_BUSY/) },
      });
    } finally {
      other.exec('rollback');
      other.close();
    }
    const after = await t.gql(CREATE, { n: 'released' }, agent);
    expect(after.body.errors).toBeUndefined();
  });
});
