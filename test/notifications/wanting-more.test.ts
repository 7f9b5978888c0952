import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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

import { feed, generalOf, SET_RULE, settle, UPDATE_SETTINGS } from './_helpers.js';

// Who of a channel wants more than mentions is read only when someone could
// (src/services/notifications/wanting-more.ts), and each change of a setting or a rule is
// followed by the very next message.
describe(`who wants every message of a channel (${TEST_DB})`, () => {
  const clock = new ManualClock(new Date('2026-06-01T09:00:00Z'));
  let t: TestApp;
  let olga: Agent, mike: Agent, carl: Agent;
  let serverId: string, general: string, other: string;
  /** Set by a test: on SQLite each flush of the log waits for it (a slow disk made on purpose). */
  let hold: { gate: Promise<void>; reached: () => void } | null = null;

  const updateSettings = async (agent: Agent, input: Record<string, unknown>) =>
    ok(await t.gql(UPDATE_SETTINGS, { i: input }, agent));
  const setRule = async (agent: Agent, input: Record<string, unknown>) =>
    ok(await t.gql(SET_RULE, { i: input }, agent));
  const channelMutation = async (agent: Agent, query: string, c: string) =>
    ok(await t.gql(query, { c }, agent));
  const JOIN = 'mutation($c: ID!) { joinChannel(conversationId: $c) { id } }';
  const LEAVE = 'mutation($c: ID!) { leaveChannel(conversationId: $c) }';
  /** The kinds of the notifications `agent` got for a message `olga` sends now. */
  const notifiedBy = async (agent: Agent, conversationId: string, text: string) => {
    clock.advance(1000);
    const m = await send(t, olga, conversationId, text);
    await settle(t);
    return (await feed(t, agent)).items.filter((i) => i.messageId === m.id).map((i) => i.kind);
  };
  /** Whether a message sent now reads who wants more (the statement over the settings). */
  const reads = async () => {
    const skipped = t.ctx.services.notifications.wantingMore.skipped;
    const texts = await recordQueries(async () => {
      clock.advance(1000);
      await send(t, olga, general, 'plain');
      await settle(t);
    });
    // The read of a channel's members who want more (the snapshot's own read has no union).
    const read = texts.some((s) => s.includes('notification_setting') && /union all/i.test(s));
    expect(t.ctx.services.notifications.wantingMore.skipped).toBe(read ? skipped : skipped + 1);
    return read;
  };

  beforeAll(async () => {
    t = await createTestApp({
      clock,
      overrides: {
        beforeFlush: async () => {
          const held = hold;
          if (!held) return;
          held.reached();
          await held.gate;
        },
      },
    });
    [olga, mike, carl] = await Promise.all(
      ['olgawm', 'mikewm', 'carlwm'].map((u) => signUpAndIn(t, { username: u })),
    );
    serverId = (await createWorkspace(t, olga, 'Wanting more')).id;
    await inviteAndJoin(t, olga, serverId, [mike, carl]);
    general = await generalOf(t, olga, serverId);
    other = ok(
      await t.gql(
        'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }',
        { i: { serverId, name: 'other' } },
        olga,
      ),
    ).createChannel.id as string;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reads nothing when nobody could want more than mentions', async () => {
    expect(await reads()).toBe(false);
    expect(await notifiedBy(mike, general, 'nothing for mike')).toEqual([]);
  });

  it('follows a setting of every message from the next message on, and its removal', async () => {
    await updateSettings(mike, { level: 'ALL' });
    expect(await notifiedBy(mike, general, 'now for mike')).toEqual(['MESSAGE']);
    expect(await reads()).toBe(true);
    await updateSettings(mike, { level: 'MENTIONS' });
    expect(await notifiedBy(mike, general, 'no longer for mike')).toEqual([]);
    expect(await reads()).toBe(false);
  });

  it('follows keywords from the next message on', async () => {
    await updateSettings(mike, { keywords: ['deploy'] });
    expect(await notifiedBy(mike, general, 'time to deploy')).toEqual(['KEYWORD']);
    await updateSettings(mike, { keywords: [] });
    expect(await notifiedBy(mike, general, 'time to deploy again')).toEqual([]);
    expect(await reads()).toBe(false);
  });

  it('follows a rule on the channel and on the workspace, and their removal', async () => {
    await setRule(mike, { conversationId: general, level: 'ALL' });
    expect(await notifiedBy(mike, general, 'rule of the channel')).toEqual(['MESSAGE']);
    // The rule is the channel's: a message elsewhere reads nothing.
    await channelMutation(mike, JOIN, other);
    expect(await notifiedBy(mike, other, 'elsewhere')).toEqual([]);
    await setRule(mike, { conversationId: general, level: null });
    expect(await notifiedBy(mike, general, 'rule gone')).toEqual([]);
    await setRule(mike, { serverId, level: 'ALL' });
    expect(await notifiedBy(mike, other, 'rule of the workspace')).toEqual(['MESSAGE']);
    await setRule(mike, { serverId, level: null });
    expect(await notifiedBy(mike, other, 'workspace rule gone')).toEqual([]);
    expect(await reads()).toBe(false);
  });

  it('takes membership from the database: a join and a leave count from the next message', async () => {
    await updateSettings(carl, { level: 'ALL' });
    expect(await notifiedBy(carl, other, 'before carl joins')).toEqual([]);
    await channelMutation(carl, JOIN, other);
    expect(await notifiedBy(carl, other, 'after carl joined')).toEqual(['MESSAGE']);
    await channelMutation(carl, LEAVE, other);
    expect(await notifiedBy(carl, other, 'after carl left')).toEqual([]);
    await updateSettings(carl, { level: 'MENTIONS' });
  });

  it('reads from the database while a change is under way, and keeps no snapshot read meanwhile', async () => {
    const wanting = t.ctx.services.notifications.wantingMore;
    expect(await wanting.members(general, serverId)).toEqual([]);
    let letGo: () => void = () => {};
    const gate = new Promise<void>((r) => (letGo = r));
    let reached: () => void = () => {};
    const underWay = new Promise<void>((r) => (reached = r));
    // Held after its write: on PostgreSQL before its commit, on SQLite while its commit waits
    // for the disk (its connection is then free for the read below).
    if (TEST_DB === 'sqlite') hold = { gate, reached };
    const change = t.ctx.db.transaction(async (tx) => {
      wanting.changing(tx);
      await tx.db
        .updateTable('notification_setting')
        .set({ updatedAt: clock.now().getTime() })
        .where('accountId', '=', carl.id)
        .execute();
      if (TEST_DB === 'postgres') {
        reached();
        await gate;
      }
    });
    await underWay;
    const skipped = wanting.skipped;
    expect(await wanting.members(general, serverId)).toEqual([]);
    expect(wanting.skipped).toBe(skipped);
    hold = null;
    letGo();
    await change;
    expect(await wanting.members(general, serverId)).toEqual([]);
    expect(wanting.skipped).toBe(skipped + 1);
  });
});
