import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { membersWantingMore } from '../../src/services/notifications/queries.js';
import { createTestApp, TEST_DB, type TestApp } from '../_util/app.js';
import { recordQueries } from '../conversations/_helpers.js';

// Every message in a channel asks who there wants more than mentions. The answer must come from
// the few people who want more (a partial index of them), each checked for membership by key,
// not from every member of the channel looked up in turn: a channel of 500 cost 0.5 ms a
// message that way in the active-users profile.
describe.runIf(TEST_DB === 'sqlite')('who wants more than mentions: the plan', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reads the partial index of people wanting more, and members by key', async () => {
    const [text] = (
      await recordQueries(() => membersWantingMore(t.ctx.db.kysely, 'c-1', 'w-1'))
    ).filter((s) => s.includes('"notification_setting"'));
    expect(text).toBeDefined();
    const params = Array.from({ length: (text!.match(/\?/g) ?? []).length }, () => 'x');
    const plan = (
      await t.ctx.db.kysely.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${text}`, params),
      )
    ).rows.map((r) => r.detail);
    expect(plan.join('\n')).toMatch(/notification_setting_wants_more_idx/);
    // The members are probed by (conversation, account), never scanned by conversation alone.
    const memberSteps = plan.filter((d) => /conversation_member/.test(d));
    expect(memberSteps.length).toBeGreaterThan(0);
    for (const d of memberSteps) expect(d).toMatch(/conversationId=\? AND accountId=\?/);
  });
});
