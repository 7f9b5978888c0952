import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { ok, recordQueries, send, sharedChannel } from '../conversations/_helpers.js';

import { feed, SET_RULE, settle, UPDATE_SETTINGS } from './_helpers.js';

// Every message in a channel asks who there wants more than mentions. On PostgreSQL the asks of
// messages sent together go as one statement (src/db/statements/batched-reads.ts): each channel must still
// get its own people, by their own settings and rules.
describe(`who wants more, asked for messages sent together (${TEST_DB})`, () => {
  let t: TestApp;
  let owners: Agent[];
  let fan: Agent;
  let keen: Agent;
  let channels: string[];

  beforeAll(async () => {
    t = await createTestApp();
    owners = [];
    for (let i = 0; i < 3; i++) owners.push(await signUpAndIn(t, { username: `wmowner${i}` }));
    fan = await signUpAndIn(t, { username: 'wmfan' });
    keen = await signUpAndIn(t, { username: 'wmkeen' });
    channels = [];
    // fan and keen are in the first two workspaces; the third has neither.
    for (let i = 0; i < owners.length; i++) {
      channels.push(await sharedChannel(t, owners[i]!, i < 2 ? [fan, keen] : [], `Wants ${i}`));
    }
    // fan wants every message of the first channel (a rule there); keen has a keyword.
    ok(await t.gql(SET_RULE, { i: { conversationId: channels[0], level: 'ALL' } }, fan));
    ok(await t.gql(UPDATE_SETTINGS, { i: { keywords: ['deploy'] } }, keen));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('notifies each channel’s own people, whatever was read with it', async () => {
    const texts = await recordQueries(async () => {
      // Four rounds of three at once: the fan-out's queue fills while its first reads are out.
      await Promise.all(
        [0, 1, 2, 3].flatMap(() => [
          send(t, owners[0]!, channels[0]!, 'a plain note in the first'),
          send(t, owners[1]!, channels[1]!, 'time to deploy the second'),
          send(t, owners[2]!, channels[2]!, 'deploy where nobody listens'),
        ]),
      );
      await settle(t);
    });
    const fanFeed = await feed(t, fan);
    expect(fanFeed.items.map((n) => [n.kind, n.conversationId])).toEqual(
      Array(4).fill(['MESSAGE', channels[0]]),
    );
    const keenFeed = await feed(t, keen);
    expect(keenFeed.items.map((n) => [n.kind, n.conversationId])).toEqual(
      Array(4).fill(['KEYWORD', channels[1]]),
    );
    // The asks, not the read of who could want more anywhere (wanting-more.ts), which has no union.
    const asks = texts.filter(
      (s) => s.includes('"notification_rule" as "r"') && /union all/i.test(s),
    );
    if (TEST_DB === 'postgres') expect(asks.length).toBeLessThan(12);
    else expect(asks).toHaveLength(12);
  });
});
