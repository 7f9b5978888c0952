import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { DAY_MS, ManualClock } from '../../src/lib/clock.js';

import { cli, codeOf } from './_helpers.js';

const PAGE = `query($b: String, $a: String, $l: Int) {
  instanceAuditLog(before: $b, after: $a, limit: $l) {
    entries { id kind action actorId target reason details createdAt cursor } nextCursor prevCursor } }`;

/** Keys of an audit log line, without the ones every line has. */
const shape = (line: Record<string, unknown>) => Object.keys(line).sort();

describe('audit log', () => {
  let t: TestApp;
  let op: Agent;
  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_AUDIT_RETENTION_DAYS: '7' } });
    op = await signUpAndIn(t, { operator: true });
  });
  afterAll(async () => t?.close());

  const gqlLines = () => t.logs.lines.filter((l) => l.msg === 'audit');

  it('writes the same audit line from GraphQL and the CLI, only actor_id differs', async () => {
    const victim = await signUpAndIn(t);
    const report = await t.gql(
      'mutation($id: ID!) { reportUser(userId: $id, category: SPAM) { id } }',
      { id: victim.id },
      op,
    );
    const reportId = report.body.data?.reportUser.id as string;
    const pairs: Array<[string, () => Promise<unknown>, string[]]> = [
      [
        'ip.block',
        () =>
          t.gql(
            'mutation { instanceBlockIp(cidr: "203.0.113.0/24", reason: "r") { cidr } }',
            {},
            op,
          ),
        ['ip', 'block', '198.51.100.0/24', '--reason', 'r'],
      ],
      [
        'ip.unblock',
        () => t.gql('mutation { instanceUnblockIp(cidr: "203.0.113.0/24") { cidr } }', {}, op),
        ['ip', 'unblock', '198.51.100.0/24'],
      ],
      [
        'principal.block',
        () =>
          t.gql(
            'mutation { instanceBlockPrincipal(principalId: "server:a.example", reason: "r") { sessionsEnded } }',
            {},
            op,
          ),
        ['principal', 'block', 'server:b.example', '--reason', 'r'],
      ],
      [
        'principal.unblock',
        () =>
          t.gql(
            'mutation { instanceUnblockPrincipal(principalId: "server:a.example") { kind } }',
            {},
            op,
          ),
        ['principal', 'unblock', 'server:b.example'],
      ],
    ];
    for (const [action, viaGql, argv] of pairs) {
      const before = gqlLines().length;
      await viaGql();
      const fromGql = gqlLines().slice(before);
      const run = await cli(t, argv);
      expect(run.code).toBe(0);
      const fromCli = run.logLines.filter((l) => l.msg === 'audit');
      expect([action, fromGql.length, fromCli.length]).toEqual([action, 1, 1]);
      const g = fromGql[0]!;
      const c = fromCli[0]!;
      expect(shape(c)).toEqual(shape(g));
      expect(g).toMatchObject({ action, actor_id: op.id, kind: 'moderation', subsystem: 'audit' });
      expect(c).toMatchObject({ action, actor_id: 'cli', kind: 'moderation', subsystem: 'audit' });
      // Each line is its row.
      const row = await t.ctx.db.kysely
        .selectFrom('audit_log')
        .selectAll()
        .where('id', '=', c.audit_id as string)
        .executeTakeFirstOrThrow();
      expect({
        action: row.action,
        actor_id: row.actorId,
        target: row.target,
        reason: row.reason,
      }).toEqual({
        action: c.action,
        actor_id: c.actor_id,
        target: c.target,
        reason: c.reason,
      });
      expect(c.at).toBe(new Date(Number(row.createdAt)).toISOString());
    }
    // Resolving a report: GraphQL, then the CLI on another report.
    const other = await t.gql(
      'mutation($id: ID!) { reportUser(userId: $id, category: HATE) { id } }',
      { id: op.id },
      victim,
    );
    const before = gqlLines().length;
    await t.gql(
      'mutation($id: ID!) { instanceResolveReport(id: $id) { id } }',
      { id: reportId },
      op,
    );
    const g = gqlLines().slice(before);
    const run = await cli(t, ['abuse-reports', 'resolve', other.body.data?.reportUser.id]);
    const c = run.logLines.filter((l) => l.msg === 'audit');
    expect(g).toHaveLength(1);
    expect(c).toHaveLength(1);
    expect(shape(c[0]!)).toEqual(shape(g[0]!));
    expect(g[0]).toMatchObject({
      action: 'report.resolve',
      actor_id: op.id,
      target: `report:${reportId}`,
    });
    // The CLI's operator grant writes the same shape too.
    const grant = await cli(t, ['operator', 'grant', victim.username]);
    const gl = grant.logLines.filter((l) => l.msg === 'audit');
    expect(gl).toHaveLength(1);
    expect(shape(gl[0]!)).toEqual(shape(g[0]!));
  });

  it('pages newest first over (time, id), forward and back, from GraphQL and the CLI', async () => {
    const first = await t.gql(PAGE, { l: 3 }, op);
    expect(first.body.errors).toBeUndefined();
    const all: Array<{ id: string; createdAt: string; cursor: string }> = [];
    let page = first.body.data?.instanceAuditLog;
    expect(page.prevCursor).toBeNull();
    for (;;) {
      all.push(...page.entries);
      if (!page.nextCursor) break;
      page = (await t.gql(PAGE, { b: page.nextCursor, l: 3 }, op)).body.data?.instanceAuditLog;
    }
    const total = await t.ctx.db.kysely.selectFrom('audit_log').select('id').execute();
    expect(all).toHaveLength(total.length);
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    const keys = all.map((e) => `${e.createdAt}|${e.id}`);
    expect([...keys].sort().reverse()).toEqual(keys);
    // From the second page, prevCursor leads back to the first.
    const second = (
      await t.gql(PAGE, { b: first.body.data?.instanceAuditLog.nextCursor, l: 3 }, op)
    ).body.data?.instanceAuditLog;
    const back = (await t.gql(PAGE, { a: second.prevCursor, l: 3 }, op)).body.data
      ?.instanceAuditLog;
    expect(back.entries.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 3).map((e) => e.id));

    const cliPage = await cli(t, ['audit', 'list', '--limit', '3']);
    expect(cliPage.code).toBe(0);
    expect(cliPage.json.entries.map((e: { id: string }) => e.id)).toEqual(
      all.slice(0, 3).map((e) => e.id),
    );
    const cliNext = await cli(t, [
      'audit',
      'list',
      '--limit',
      '3',
      '--before',
      cliPage.json.nextCursor,
    ]);
    expect(cliNext.json.entries.map((e: { id: string }) => e.id)).toEqual(
      all.slice(3, 6).map((e) => e.id),
    );

    expect(codeOf(await t.gql(PAGE, { b: 'forged!' }, op))).toBe('VALIDATION');
    expect(codeOf(await t.gql(PAGE, { l: 0 }, op))).toBe('VALIDATION');
    expect(codeOf(await t.gql(PAGE, { l: 201 }, op))).toBe('VALIDATION');
    expect((await cli(t, ['audit', 'list', '--limit', 'lots'])).code).toBe(2);
  });

  it('prunes command rows past SVC_AUDIT_RETENTION_DAYS daily, and never moderation rows', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const t2 = await createTestApp({ clock, env: { SVC_AUDIT_RETENTION_DAYS: '7' } });
    try {
      const info = await t2.gql('{ serverInfo { auditRetentionDays } }');
      expect(info.body.data?.serverInfo.auditRetentionDays).toBe(7);
      const audit = t2.ctx.services.moderation.audit;
      const write = (kind: 'command' | 'moderation', target: string) =>
        t2.ctx.db.transaction((tx) =>
          audit.record(tx, { kind, action: 'test.write', actorId: 'cli', target }),
        );
      await write('command', 'old-command');
      await write('moderation', 'old-moderation');
      clock.advance(7 * DAY_MS + 1);
      await write('command', 'new-command');
      expect(await t2.ctx.scheduler.runOnce('audit-retention')).toBe(true);
      const left = await t2.ctx.db.kysely.selectFrom('audit_log').select('target').execute();
      const targets = left.map((r) => r.target);
      expect(targets).toContain('old-moderation');
      expect(targets).toContain('new-command');
      expect(targets).not.toContain('old-command');
      // Idempotent: a second run finds nothing more.
      expect(await t2.ctx.scheduler.runOnce('audit-retention')).toBe(true);
      expect(
        await t2.ctx.db.kysely.selectFrom('audit_log').select('target').execute(),
      ).toHaveLength(left.length);
      // Kept forever when the retention is not set.
      clock.advance(365 * DAY_MS);
      expect(await audit.pruneCommandRows(null)).toBe(0);
    } finally {
      await t2.close();
    }
  });
});
