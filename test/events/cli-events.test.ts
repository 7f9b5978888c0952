import { describe, expect, it } from 'vitest';

import { TEST_DB } from '../_util/app.js';
import { cli } from '../cli/cli-io.js';
import {
  Collected,
  createWorkspace,
  joinWorkspace,
  modernClient,
  sendMessage,
  startRealtime,
  WORKSPACE_EVENTS,
  type RealtimeTestServer,
  until,
} from '../realtime/_helpers.js';

// Events raised by the command line reach connected clients (docs/events.md, "Delivery"): on
// SQLite the CLI has no way to the server's listeners, so the server's drainer delivers what it
// wrote to the outbox; on PostgreSQL with Redis the CLI publishes through Redis itself.
const REDIS_URL = process.env.SVC_TEST_REDIS_URL;
const withRedis = TEST_DB === 'postgres' && REDIS_URL !== undefined;

function redisEnv(): Record<string, string> {
  if (!withRedis) return {};
  const prefix = `svc-test-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}:`;
  return { SVC_REDIS_URL: REDIS_URL!, SVC_REDIS_PREFIX: prefix };
}

/** A server whose workspace `watcher` owns and watches, with `author` in it. */
async function watched(t: RealtimeTestServer) {
  const watcher = await t.signUp();
  const author = await t.signUp();
  const ws = await createWorkspace(t, watcher);
  await joinWorkspace(t, watcher, author, ws.id);
  const general = ws.channels.general!;
  const client = modernClient(t.wsUrl, watcher);
  const events = new Collected(client, WORKSPACE_EVENTS, { id: ws.id });
  await until(async () => (await t.subscriptions()) === 1, 'the subscription');
  const messageId = await sendMessage(t, author, general, 'to be removed');
  await waitForEvent(events, 'MessageCreated', (p) => p.message?.id === messageId);
  return { watcher, author, ws, client, events, messageId };
}

async function waitForEvent(
  events: Collected,
  type: string,
  match: (payload: Record<string, any>) => boolean,
): Promise<Record<string, any>> {
  let found: Record<string, any> | undefined;
  await until(() => {
    found = events
      .events('workspaceEvents')
      .find((e) => e.type === type && match(e.payload as Record<string, any>));
    return found !== undefined;
  }, `${type} on the stream`);
  return found!;
}

describe(`command-line events reach connected clients (${withRedis ? 'Redis' : 'no Redis'})`, () => {
  it('svc principal block --cascade: MessageDeleted for each removed message', async () => {
    const env = redisEnv();
    const t = await startRealtime({ env });
    try {
      const { author, client, events, messageId } = await watched(t);
      const run = await cli(['principal', 'block', `user:${author.id}`, '--cascade'], {
        ...t.server.database.env,
        ...env,
        SVC_LOG_LEVEL: 'warn',
      });
      expect(run.code, run.err).toBe(0);
      expect(JSON.parse(run.out)).toMatchObject({ messagesRemoved: 1 });
      const deleted = await waitForEvent(
        events,
        'MessageDeleted',
        (p) => p.messageId === messageId,
      );
      expect(deleted.payload).toMatchObject({ messageId, deletedBy: 'cli' });
      // Delivered, then removed from the outbox.
      await t.server.ctx.outbox.drain();
      await t.server.ctx.outbox.flush();
      expect(await outboxRows(t)).toBe(0);
      await client.dispose();
    } finally {
      await t.stop();
    }
  });

  it('svc account purge: MessageDeleted for each plaintext message of the account', async () => {
    const env = redisEnv();
    const t = await startRealtime({ env });
    try {
      const { author, client, events, messageId } = await watched(t);
      const asked = await t.gql(
        'mutation($c: String!) { requestAccountDeletion(input: { confirmUsername: $c }) { scheduledFor } }',
        { c: author.username },
        author,
      );
      expect(asked.errors).toBeUndefined();
      const run = await cli(['account', 'purge', '--now'], {
        ...t.server.database.env,
        ...env,
        SVC_LOG_LEVEL: 'warn',
      });
      expect(run.code, run.err).toBe(0);
      expect(JSON.parse(run.out)).toEqual({ purged: 1, accountIds: [author.id] });
      const deleted = await waitForEvent(
        events,
        'MessageDeleted',
        (p) => p.messageId === messageId,
      );
      expect(deleted.payload).toMatchObject({ messageId, deletedBy: author.id });
      await t.server.ctx.outbox.drain();
      await t.server.ctx.outbox.flush();
      expect(await outboxRows(t)).toBe(0);
      await client.dispose();
    } finally {
      await t.stop();
    }
  });
});

async function outboxRows(t: RealtimeTestServer): Promise<number> {
  const rows = await t.server.ctx.db.kysely.selectFrom('event_outbox').select('id').execute();
  return rows.length;
}
