import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { newId } from '../../src/lib/ids.js';
import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import {
  createWorkspace,
  expectCode,
  inviteAndJoin,
  ok,
  recordQueries,
  send,
  sendRaw,
} from './_helpers.js';

// The caller's access to the conversation a request's one root field names is read with the
// request's session: one statement on PostgreSQL instead of two
// (src/services/conversations/prefetched-access.ts). What a request may do is unchanged: each
// answer is the request's own, read after it arrived, and a check after a write in the same
// request reads again.
describe(`access read with the session (${TEST_DB})`, () => {
  let t: TestApp;
  let olga: Agent, mike: Agent, nina: Agent;
  let serverId: string, channel: string;

  /** Statements that read the caller's access without a session (a read of its own). */
  const ownAccessReads = (texts: string[]) =>
    texts.filter((s) => /from "conversation" as "c"/.test(s) && !s.includes('"tokenHash"'));
  const sessionReads = (texts: string[]) => texts.filter((s) => s.includes('"tokenHash"'));

  beforeAll(async () => {
    t = await createTestApp();
    [olga, mike, nina] = await Promise.all(
      ['olgapre', 'mikepre', 'ninapre'].map((u) => signUpAndIn(t, { username: u })),
    );
    serverId = (await createWorkspace(t, olga, 'Prefetch')).id;
    await inviteAndJoin(t, olga, serverId, [mike]);
    channel = (
      ok(
        await t.gql(
          'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }',
          { i: { serverId, name: 'prefetch' } },
          olga,
        ),
      ).createChannel as { id: string }
    ).id;
    ok(
      await t.gql(
        'mutation($c: ID!) { joinChannel(conversationId: $c) { id } }',
        { c: channel },
        mike,
      ),
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  it.runIf(TEST_DB === 'postgres')(
    'reads the access of sendMessage, messages, markRead and startTyping with the session',
    async () => {
      const m = await send(t, olga, channel, 'warm up');
      const requests: Array<[string, Record<string, unknown>]> = [
        [
          'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }',
          { i: { conversationId: channel, text: 'by variable' } },
        ],
        [
          `mutation { sendMessage(input: { conversationId: "${channel}", text: "literal" }) { id } }`,
          {},
        ],
        ['query($c: ID!) { messages(conversationId: $c) { items { id } } }', { c: channel }],
        [
          'mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id } }',
          { c: channel, m: m.id },
        ],
        ['mutation($c: ID!) { startTyping(conversationId: $c) }', { c: channel }],
      ];
      for (const [query, variables] of requests) {
        const texts = await recordQueries(() => t.gql(query, variables, mike));
        await t.ctx.services.notifications.settled();
        expect(sessionReads(texts), query).toHaveLength(1);
        expect(ownAccessReads(texts), query).toEqual([]);
      }
    },
  );

  it.runIf(TEST_DB === 'postgres')(
    'reads separately for a request of several root fields, or none named',
    async () => {
      const two = await recordQueries(() =>
        t.gql(
          'mutation($c: ID!) { a: sendMessage(input: { conversationId: $c, text: "a" }) { id } b: sendMessage(input: { conversationId: $c, text: "b" }) { id } }',
          { c: channel },
          mike,
        ),
      );
      await t.ctx.services.notifications.settled();
      expect(sessionReads(two)).toHaveLength(1);
      expect(ownAccessReads(two)).toHaveLength(2);
    },
  );

  it('answers each request for its own caller when they are read together', async () => {
    // nina is no member of the workspace: the same conversation, read in the same batch.
    const [byMike, byNina, byOlga] = await Promise.all([
      sendRaw(t, mike, channel, 'mine'),
      sendRaw(t, nina, channel, 'not mine'),
      sendRaw(t, olga, channel, 'also mine'),
    ]);
    expect(ok(byMike).sendMessage).toBeDefined();
    expectCode(byNina, 'NOT_FOUND');
    expect(ok(byOlga).sendMessage).toBeDefined();
  });

  it('answers NOT_FOUND for a conversation that does not exist', async () => {
    const res = await sendRaw(t, mike, newId(), 'nowhere');
    expectCode(res, 'NOT_FOUND');
  });

  it('reads again after a write of the same request: a channel left is left', async () => {
    const res = await t.gql(
      'mutation($c: ID!) { leaveChannel(conversationId: $c) sendMessage(input: { conversationId: $c, text: "after leaving" }) { id } }',
      { c: channel },
      mike,
    );
    expectCode(res, 'FORBIDDEN');
    const page = ok(
      await t.gql(
        'query($c: ID!) { messages(conversationId: $c) { items { text } } }',
        { c: channel },
        olga,
      ),
    ).messages as { items: Array<{ text: string }> };
    expect(page.items.map((i) => i.text)).not.toContain('after leaving');
  });

  it('refuses a session ended before the request, whatever conversation it names', async () => {
    const gone = await signUpAndIn(t, { username: 'gonepre' });
    await inviteAndJoin(t, olga, serverId, [gone]);
    ok(await t.gql('mutation { logout }', {}, gone));
    expectCode(await sendRaw(t, gone, channel, 'ghost'), 'UNAUTHENTICATED');
  });
});
