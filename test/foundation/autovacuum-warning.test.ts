import pg from 'pg';
import { describe, expect, it } from 'vitest';

import { PG_URL, startTestServer, TEST_DB } from '../_util/app.js';

const WARNING = /^PostgreSQL runs with autovacuum off/;

// A PostgreSQL without autovacuum never refreshes its planner's statistics: the server says so at
// start (docs/operations.md). The test reads the setting itself, so it holds on a database with
// autovacuum on (no warning) as on one with it off (this project's CI configuration).
describe(`the autovacuum warning at start (${TEST_DB})`, () => {
  it('is logged exactly when the database runs without autovacuum', async () => {
    let off = false;
    if (TEST_DB === 'postgres') {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      off = (await client.query('show autovacuum')).rows[0].autovacuum === 'off';
      await client.end();
    }
    const server = await startTestServer();
    try {
      const warnings = server.logs.lines.filter(
        (l) => typeof l.msg === 'string' && WARNING.test(l.msg),
      );
      expect(warnings.map((w) => w.level)).toEqual(off ? [40] : []);
    } finally {
      await server.stop();
    }
  });
});
