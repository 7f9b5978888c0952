import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, PG_URL, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { expectCode, send } from '../conversations/_helpers.js';
import { createWorkspace } from '../workspaces/_helpers.js';

const REACT = 'mutation($m: ID!, $e: String!) { addReaction(messageId: $m, emoji: $e) { id } }';
const PIN = 'mutation($m: ID!) { pinMessage(messageId: $m) { id } }';

// PostgreSQL only: several transactions run at once there. A delete that holds the message row
// while a reaction or pin is on its way must win: the write waits for it and answers CONFLICT,
// instead of landing on a message that is already deleted. (SQLite runs one writer at a time.)
describe.skipIf(TEST_DB !== 'postgres')('writes racing a message delete', () => {
  let t: TestApp;
  let owner: Agent;
  let channelId: string;
  beforeAll(async () => {
    t = await createTestApp();
    owner = await signUpAndIn(t);
    const ws = await createWorkspace(t, owner, 'race');
    const res = await t.gql(
      'query($s: ID!) { channels(serverId: $s) { id } }',
      { s: ws.id },
      owner,
    );
    channelId = res.body.data!.channels[0].id;
  });
  afterAll(async () => t?.close());

  for (const [name, doc, table] of [
    ['reaction', REACT, 'reaction'],
    ['pin', PIN, 'pin'],
  ] as const) {
    it(`a ${name} waits for a concurrent delete and is refused`, async () => {
      const message = await send(t, owner, channelId, `race ${name}`);
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        await client.query(`set search_path to ${t.database.pgSchema}`);
        await client.query('begin');
        await client.query(`update message set "deletedAt" = 1, text = null where id = $1`, [
          message.id,
        ]);
        await client.query(`delete from ${table} where "messageId" = $1`, [message.id]);
        const pending = t.gql(doc, { m: message.id, e: '👍' }, owner);
        // The write is blocked on the row lock; let it get there, then commit the delete.
        await new Promise((r) => setTimeout(r, 300));
        await client.query('commit');
        expectCode(await pending, 'CONFLICT');
      } finally {
        await client.end();
      }
      const left = await t.ctx.db.kysely
        .selectFrom(table)
        .select('messageId')
        .where('messageId', '=', message.id)
        .execute();
      expect(left).toHaveLength(0);
    });
  }
});
