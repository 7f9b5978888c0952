import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { AppContext } from '../../src/context.js';
import { DAY_MS, HOUR_MS, ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import {
  createMigratedContext,
  createTestApp,
  createTestDatabase,
  type Agent,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import { signIn, signUpAndIn } from '../_util/seed.js';
import { createWorkspace, inviteAndJoin, ok } from '../workspaces/_helpers.js';

import { auditRows, exec, generalOf } from './_helpers.js';

// Reminders and scheduled pipelines across restarts and several processes on one database, the
// run cap, and the command audit's retention.

const clock = new ManualClock();
const env = { SVC_AUDIT_RETENTION_DAYS: '1' };
let database: TestDatabase;
let t: TestApp;
let other: AppContext;
let olga: Agent, mike: Agent;
let serverId: string, general: string;

const CREATE_PIPE = `mutation($i: CreatePipelineInput!) { createPipeline(input: $i) { id } }`;

const count = async (ctx: AppContext, text: string) =>
  (
    await ctx.db.kysely
      .selectFrom('message')
      .select('id')
      .where('conversationId', '=', general)
      .where('text', '=', text)
      .execute()
  ).length;

beforeAll(async () => {
  database = await createTestDatabase();
  t = await createTestApp({ clock, database, env });
  olga = await signUpAndIn(t, { username: 'olgasched' });
  mike = await signUpAndIn(t, { username: 'mikesched' });
  serverId = (await createWorkspace(t, olga, 'Scheduling')).id;
  await inviteAndJoin(t, olga, serverId, [mike]);
  general = await generalOf(t, olga, serverId);
  // A second server process on the same database.
  other = await createMigratedContext(database, env, {
    clock,
    noJobs: true,
    pgSchema: database.pgSchema,
  });
});
afterAll(async () => {
  await other?.close();
  await t?.close();
  await database.drop();
});

describe('scheduled pipelines', () => {
  it('run once across two processes', async () => {
    const pipe = ok(
      await t.gql(
        CREATE_PIPE,
        {
          i: {
            serverId,
            name: 'ticker',
            trigger: { kind: 'SCHEDULE', everyMinutes: 5 },
            channelId: general,
            steps: [{ command: 'me', args: { text: 'tick' } }],
          },
        },
        olga,
      ),
    ).createPipeline;
    clock.advance(5 * MINUTE_MS);
    const ran = await Promise.all([
      t.ctx.services.commands.pipelines.runDue(),
      other.services.commands.pipelines.runDue(),
      t.ctx.services.commands.pipelines.runDue(),
    ]);
    expect(ran.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await count(t.ctx, '_tick_')).toBe(1);
    clock.advance(5 * MINUTE_MS);
    await Promise.all([
      t.ctx.scheduler.runOnce('command-pipelines'),
      other.services.commands.pipelines.runDue(),
    ]);
    expect(await count(t.ctx, '_tick_')).toBe(2);
    ok(await t.gql('mutation($id: ID!) { deletePipeline(id: $id) }', { id: pipe.id }, olga));
  });

  it('skip runs past the hourly cap and resume in the next hour', async () => {
    const pipe = ok(
      await t.gql(
        CREATE_PIPE,
        {
          i: {
            serverId,
            name: 'busy',
            trigger: { kind: 'MESSAGE', pattern: 'ping' },
            steps: [{ command: 'me', args: { text: 'pong' } }],
          },
        },
        olga,
      ),
    ).createPipeline;
    const row = await t.ctx.db.kysely
      .selectFrom('command_pipeline')
      .selectAll()
      .where('id', '=', pipe.id)
      .executeTakeFirstOrThrow();
    const pipelines = t.ctx.services.commands.pipelines;
    const trigger = { conversationId: general, vars: {} };
    for (let i = 0; i < 60; i++) expect(await pipelines.run(row, trigger)).toBe('ran');
    expect(await pipelines.run(row, trigger)).toBe('capped');
    expect(await count(t.ctx, '_pong_')).toBe(60);
    clock.advance(HOUR_MS);
    expect(await pipelines.run(row, trigger)).toBe('ran');
    ok(await t.gql('mutation($id: ID!) { deletePipeline(id: $id) }', { id: pipe.id }, olga));
  });
});

describe('reminders', () => {
  it('survive a restart and are posted once across processes', async () => {
    ok(
      await exec(t, mike, {
        command: 'remind',
        text: '1h stretch',
        context: { conversationId: general },
      }),
    );
    // The server restarts on the same database.
    await t.close();
    t = await createTestApp({ clock, database, env });
    mike = await signIn(t, 'mikesched');
    clock.advance(HOUR_MS);
    const posted = await Promise.all([
      t.ctx.services.commands.reminders.postDue(),
      other.services.commands.reminders.postDue(),
    ]);
    expect(posted.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await count(t.ctx, '⏰ Reminder: stretch')).toBe(1);
    const author = await t.ctx.db.kysely
      .selectFrom('message')
      .select('authorId')
      .where('text', '=', '⏰ Reminder: stretch')
      .executeTakeFirstOrThrow();
    expect(author.authorId).toBe(mike.id);
  });
});

describe('the command audit', () => {
  it('keeps rows SVC_AUDIT_RETENTION_DAYS days', async () => {
    expect(
      ok(await t.gql('{ serverInfo { auditRetentionDays } }')).serverInfo.auditRetentionDays,
    ).toBe(1);
    ok(await exec(t, mike, { command: 'shrug', context: { conversationId: general } }));
    const before = (await auditRows(t)).length;
    expect(before).toBeGreaterThan(0);
    clock.advance(DAY_MS + MINUTE_MS);
    ok(await exec(t, mike, { command: 'shrug', context: { conversationId: general } }));
    await t.ctx.scheduler.runOnce('audit-retention');
    const after = await auditRows(t);
    expect(after).toHaveLength(1);
    expect(after[0]!.d.command).toBe('shrug');
  });
});
