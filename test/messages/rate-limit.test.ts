import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HOUR_MS, ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import {
  conversationOf,
  createWorkspace,
  expectCode,
  inviteAndJoin,
  ok,
  send,
  sendRaw,
} from '../conversations/_helpers.js';

const FORWARD =
  'mutation($m: ID!, $to: ID!) { forwardMessage(messageId: $m, toConversationId: $to) { id } }';

describe('message rate limits', () => {
  const clock = new ManualClock(Date.parse('2030-09-01T00:00:00Z'));
  let t: TestApp;
  let vet: Agent, vet2: Agent, newbie: Agent;
  let conv: string, other: string;

  beforeAll(async () => {
    t = await createTestApp({
      clock,
      env: {
        SVC_RATE_MESSAGES_PER_MIN_PER_USER: '3',
        SVC_RATE_MESSAGES_BURST: '5',
        SVC_PROBATION_HOURS: '24',
        SVC_RATE_PROBATION_MESSAGES_PER_MIN: '2',
      },
    });
    [vet, vet2] = await Promise.all(
      ['vet', 'vet2'].map((u) => signUpAndIn(t, { username: `${u}rl` })),
    );
    clock.advance(25 * HOUR_MS);
    newbie = await signUpAndIn(t, { username: 'newbierl' });
    const ws = await createWorkspace(t, vet, 'Rates');
    await inviteAndJoin(t, vet, ws.id, [vet2, newbie]);
    conv = (await conversationOf(t, vet, [vet2, newbie])).conversation.id;
    other = (await conversationOf(t, vet, [vet2])).conversation.id;
  });
  afterAll(async () => t?.close());

  it('allows the burst, then one message per 20 s at 3 a minute, over sends, replies and forwards', async () => {
    const root = await send(t, vet, conv, 'one');
    await send(t, vet, conv, 'two', root.id);
    ok(await t.gql(FORWARD, { m: root.id, to: other }, vet));
    await send(t, vet, other, 'four');
    await send(t, vet, conv, 'five');
    for (const attempt of [
      () => sendRaw(t, vet, conv, 'six'),
      () => sendRaw(t, vet, conv, 'reply', root.id),
      () => t.gql(FORWARD, { m: root.id, to: other }, vet),
    ]) {
      const err = expectCode(await attempt(), 'RATE_LIMITED');
      expect(err.extensions!.retryAfterSeconds).toBe(20);
    }
    // Per user: another is untouched. A refused message is not stored.
    await send(t, vet2, conv, 'mine');
    const texts = (
      await t.ctx.db.kysely
        .selectFrom('message')
        .select('text')
        .where('authorId', '=', vet.id)
        .execute()
    ).map((r) => r.text);
    expect(texts).not.toContain('six');
    clock.advance(19_000);
    expect(
      expectCode(await sendRaw(t, vet, conv, 'six'), 'RATE_LIMITED').extensions!.retryAfterSeconds,
    ).toBe(1);
    clock.advance(1_000);
    await send(t, vet, conv, 'six');
    expectCode(await sendRaw(t, vet, conv, 'seven'), 'RATE_LIMITED');
  });

  it('holds accounts on probation to the probation rate, burst of the same size', async () => {
    await send(t, newbie, conv, 'p1');
    await send(t, newbie, conv, 'p2');
    const err = expectCode(await sendRaw(t, newbie, conv, 'p3'), 'RATE_LIMITED');
    expect(err.extensions!.retryAfterSeconds).toBe(30);
    // Once probation is over, the normal rate applies.
    clock.advance(24 * HOUR_MS);
    for (const x of ['a', 'b', 'c', 'd', 'e']) await send(t, newbie, conv, x);
    expectCode(await sendRaw(t, newbie, conv, 'f'), 'RATE_LIMITED');
  });
});
