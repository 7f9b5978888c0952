import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { namedStatements } from '../../src/db/statements/prepared.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import {
  createWorkspace,
  inviteAndJoin,
  ok,
  recordQueries,
  send,
} from '../conversations/_helpers.js';
import { generalOf, UPDATE_SETTINGS } from '../notifications/_helpers.js';

// What a message in a channel costs the database, the send and the work after its commit
// (notification fan-out, pipeline triggers) together: the reads of things that rarely change are
// kept per process (src/events/shared-cache.ts, the fan-out's conversation facts), and a change
// reaches the next message.
const CREATE_PIPE = `mutation($i: CreatePipelineInput!) { createPipeline(input: $i) { id } }`;
const ENABLE_PIPE = `mutation($id: ID!, $on: Boolean!) { setPipelineEnabled(id: $id, enabled: $on) { id enabled } }`;

describe(`the cost of a message (${TEST_DB})`, () => {
  const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
  let t: TestApp;
  let olga: Agent, mike: Agent;
  let serverId: string, general: string;

  const settled = async () => {
    await t.ctx.services.notifications.settled();
    await t.ctx.services.commands.pipelines.idle();
  };
  /** Statements of one send and of what it started after its commit. */
  const sendCost = async (text: string) =>
    recordQueries(async () => {
      await send(t, olga, general, text);
      await settled();
    });
  const echoes = async () =>
    (
      await t.ctx.db.kysely
        .selectFrom('message')
        .select('text')
        .where('conversationId', '=', general)
        .execute()
    ).filter((m) => m.text?.startsWith('_echo')).length;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    [olga, mike] = await Promise.all(
      ['olgacost', 'mikecost'].map((u) => signUpAndIn(t, { username: u })),
    );
    serverId = (await createWorkspace(t, olga, 'Cost')).id;
    await inviteAndJoin(t, olga, serverId, [mike]);
    general = await generalOf(t, olga, serverId);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reads the pipelines and the conversation once, and who wants more only when someone could', async () => {
    await sendCost('warm up');
    const texts = await sendCost('a plain message');
    expect(texts.filter((s) => s.includes('command_pipeline'))).toEqual([]);
    expect(texts.filter((s) => /^select [^;]* from "conversation" where "id"/.test(s))).toEqual([]);
    // Nobody's settings or rules ask for every message or keywords: no fan-out read at all
    // (services/notifications/wanting-more.ts; only on a sole server process).
    const wantsMore = (list: string[]) =>
      list.filter((s) => s.includes('notification_setting') && /union all/i.test(s));
    expect(wantsMore(texts)).toEqual([]);
    // Once someone wants every message: settings and rules in one statement.
    ok(await t.gql(UPDATE_SETTINGS, { i: { level: 'ALL' } }, mike));
    const after = wantsMore(await sendCost('another plain message'));
    expect(after).toHaveLength(1);
    expect(after[0]).toContain('notification_rule');
    ok(await t.gql(UPDATE_SETTINGS, { i: { level: 'MENTIONS' } }, mike));
  });

  it.runIf(TEST_DB === 'postgres')(
    "runs the send's one statement of writes as a named statement, planned once",
    async () => {
      await sendCost('warm up');
      const texts = await recordQueries(() => send(t, olga, general, 'a named one'));
      const writes = texts.filter((s) => s.includes('insert into "message"'));
      expect(writes).toHaveLength(1);
      expect(writes[0]).toMatch(/^\/\* svc:deferred-writes \*\/ with w0 as /);
      expect(namedStatements.has(writes[0]!)).toBe(true);
    },
  );

  it('sees a pipeline created, disabled and enabled again from the next message on', async () => {
    await sendCost('echo? not yet');
    const pipe = ok(
      await t.gql(
        CREATE_PIPE,
        {
          i: {
            serverId,
            name: 'echo',
            trigger: { kind: 'MESSAGE', pattern: 'ping*', channelIds: [general] },
            steps: [{ command: 'me', args: { text: 'echo {{text}}' } }],
          },
        },
        olga,
      ),
    ).createPipeline as { id: string };
    await sendCost('ping 1');
    expect(await echoes()).toBe(1);
    ok(await t.gql(ENABLE_PIPE, { id: pipe.id, on: false }, olga));
    await sendCost('ping 2');
    expect(await echoes()).toBe(1);
    ok(await t.gql(ENABLE_PIPE, { id: pipe.id, on: true }, olga));
    await sendCost('ping 3');
    expect(await echoes()).toBe(2);
  });
});
