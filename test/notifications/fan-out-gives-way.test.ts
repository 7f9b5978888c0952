import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { MessageTable } from '../../src/db/tables/messages.js';
import { RequestLoad } from '../../src/lib/request-load.js';
import { FanOut } from '../../src/services/notifications/fan-out.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { createWorkspace, inviteAndJoin, send } from '../conversations/_helpers.js';

import { generalOf, settle } from './_helpers.js';

// The fan-out runs its steps between requests (docs/notifications.md, "Fan-out"): a step starts
// only once no request is being served, or after waiting its longest.

let t: TestApp;
let olga: Agent;
let general: string;

beforeAll(async () => {
  t = await createTestApp();
  const people = await Promise.all(
    ['olga', 'mona', 'mike', 'mary'].map((u) => signUpAndIn(t, { username: `${u}gw` })),
  );
  olga = people[0]!;
  const serverId = (await createWorkspace(t, olga, 'Give way')).id;
  await inviteAndJoin(t, olga, serverId, people.slice(1));
  general = await generalOf(t, olga, serverId);
});
afterAll(async () => {
  await t?.close();
});

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An @channel message, sent and notified by the server, with its notifications taken away. */
async function channelMessage(text: string): Promise<MessageTable> {
  const m = await send(t, olga, general, text);
  await settle(t);
  const db = t.ctx.db.kysely;
  await db.deleteFrom('notification').where('messageId', '=', m.id).execute();
  return (await db
    .selectFrom('message')
    .selectAll()
    .where('id', '=', m.id)
    .executeTakeFirstOrThrow()) as MessageTable;
}

async function notified(messageId: string): Promise<number> {
  const rows = await t.ctx.db.kysely
    .selectFrom('notification')
    .select('id')
    .where('messageId', '=', messageId)
    .execute();
  return rows.length;
}

function fanOut(load: RequestLoad, giveWayMs: number): FanOut {
  return new FanOut({
    db: t.ctx.db,
    events: t.ctx.outbox,
    clock: t.ctx.clock,
    log: t.ctx.log,
    connections: t.ctx.services.presence,
    load,
    giveWayMs,
    wantingMore: t.ctx.services.notifications.wantingMore,
  });
}

describe('the notification fan-out', () => {
  it('writes nothing while a request is being served, and goes on once it is answered', async () => {
    const message = await channelMessage('all hands @channel');
    const load = new RequestLoad();
    const request = {};
    load.started(request);
    const fan = fanOut(load, 60_000);
    fan.enqueue(message);
    await pause(150);
    expect(await notified(message.id)).toBe(0);
    load.answered(request);
    await fan.settled();
    expect(await notified(message.id)).toBe(3);
  });

  it('waits for requests no longer than its last step took', async () => {
    const load = new RequestLoad();
    const fan = fanOut(load, 60_000);
    // A first message with no request being served: its steps take a few milliseconds.
    const first = await channelMessage('first @channel');
    fan.enqueue(first);
    await fan.settled();
    expect(await notified(first.id)).toBe(3);
    // Then a request that is never answered: the next message waits as long as a step took.
    load.started({});
    const second = await channelMessage('second @channel');
    fan.enqueue(second);
    const done = await Promise.race([
      fan.settled().then(() => true),
      pause(10_000).then(() => false),
    ]);
    expect(done).toBe(true);
    expect(await notified(second.id)).toBe(3);
  });

  it('goes on under requests that never pause, a step each time it has waited its longest', async () => {
    const message = await channelMessage('stand-up @channel');
    const load = new RequestLoad();
    load.started({});
    const fan = fanOut(load, 20);
    fan.enqueue(message);
    await fan.settled();
    expect(await notified(message.id)).toBe(3);
  });
});
