import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { HOUR_MS, ManualClock } from '../../src/lib/clock.js';

import {
  auditRows,
  cli,
  codeOf,
  seedConversation,
  seedMember,
  seedMessage,
  seedWorkspace,
} from './_helpers.js';

const REPORT_FIELDS = `id cursor subjectKind subjectId category text serverId subjectUsername reporterId
  reporterUsername resolved resolvedAt resolvedBy createdAt
  snapshot { messageId text authorId authorUsername messageCreatedAt username displayName
    workspaceName workspaceDescription ownerUsername }`;

const REPORT_MESSAGE = `mutation($id: ID!, $c: ReportCategory!, $t: String) {
  reportMessage(messageId: $id, category: $c, text: $t) { ${REPORT_FIELDS} } }`;
const REPORT_USER = `mutation($id: ID!, $c: ReportCategory!, $t: String) {
  reportUser(userId: $id, category: $c, text: $t) { ${REPORT_FIELDS} } }`;
const REPORT_WORKSPACE = `mutation($id: ID!, $c: ReportCategory!, $t: String) {
  reportWorkspace(serverId: $id, category: $c, text: $t) { ${REPORT_FIELDS} } }`;
const INSTANCE_REPORTS = `query($open: Boolean, $after: String, $limit: Int) {
  instanceReports(openOnly: $open, after: $after, limit: $limit) { ${REPORT_FIELDS} } }`;
const WORKSPACE_REPORTS = `query($s: ID!, $open: Boolean) {
  workspaceReports(serverId: $s, openOnly: $open) { ${REPORT_FIELDS} } }`;

describe('abuse reports', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.UTC(2026, 0, 10, 12));
  let owner: Agent;
  let moderator: Agent;
  let member: Agent;
  let outsider: Agent;
  let operator: Agent;
  let ws: { id: string; channelId: string };

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await signUpAndIn(t, { username: 'wsowner' });
    moderator = await signUpAndIn(t);
    member = await signUpAndIn(t, { username: 'spammer' });
    outsider = await signUpAndIn(t);
    operator = await signUpAndIn(t, { operator: true });
    ws = await seedWorkspace(t, owner, { name: 'Garden', description: 'plants' });
    await seedMember(t, ws.id, moderator, 'moderator', [ws.channelId]);
    await seedMember(t, ws.id, member, 'member', [ws.channelId]);
  });
  afterAll(async () => t?.close());

  it('keeps a snapshot of a message as reported, whatever happens to it later', async () => {
    const msgId = await seedMessage(t, ws.channelId, member, 'buy cheap pills');
    const res = await t.gql(REPORT_MESSAGE, { id: msgId, c: 'SPAM', t: '  obvious spam  ' }, owner);
    expect(res.body.errors).toBeUndefined();
    const report = res.body.data?.reportMessage;
    expect(report).toMatchObject({
      subjectKind: 'MESSAGE',
      subjectId: msgId,
      category: 'SPAM',
      text: 'obvious spam',
      serverId: ws.id,
      subjectUsername: 'spammer',
      reporterId: owner.id,
      resolved: false,
      snapshot: {
        messageId: msgId,
        text: 'buy cheap pills',
        authorId: member.id,
        authorUsername: 'spammer',
        messageCreatedAt: new Date(clock.now()).toISOString(),
      },
    });
    // The author edits, then deletes, the message: the report still shows what was reported.
    await t.ctx.db.kysely
      .updateTable('message')
      .set({ text: 'hello friends', editedAt: clock.now().getTime() })
      .where('id', '=', msgId)
      .execute();
    await t.ctx.db.kysely
      .updateTable('message')
      .set({ text: null, deletedAt: clock.now().getTime() })
      .where('id', '=', msgId)
      .execute();
    const list = await t.gql(INSTANCE_REPORTS, {}, operator);
    const seen = list.body.data?.instanceReports.find((r: { id: string }) => r.id === report.id);
    expect(seen.snapshot.text).toBe('buy cheap pills');
    expect(seen.reporterUsername).toBe('wsowner');
  });

  it('answers NOT_FOUND for a message the reporter cannot see, or that does not exist', async () => {
    const priv = await seedConversation(t, {
      workspaceId: ws.id,
      kind: 'channel',
      isPrivate: true,
      members: [owner, member],
    });
    const secret = await seedMessage(t, priv, member, 'private words');
    // A workspace member outside the private channel, and someone outside the workspace.
    expect(codeOf(await t.gql(REPORT_MESSAGE, { id: secret, c: 'HATE' }, moderator))).toBe(
      'NOT_FOUND',
    );
    const pub = await seedMessage(t, ws.channelId, member, 'public words');
    expect(codeOf(await t.gql(REPORT_MESSAGE, { id: pub, c: 'HATE' }, outsider))).toBe('NOT_FOUND');
    expect(
      codeOf(
        await t.gql(
          REPORT_MESSAGE,
          { id: '01890000-0000-7000-8000-00000000dead', c: 'HATE' },
          owner,
        ),
      ),
    ).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(REPORT_MESSAGE, { id: 'not-an-id', c: 'HATE' }, owner))).toBe(
      'NOT_FOUND',
    );
    // A member of the private channel may report it.
    expect(codeOf(await t.gql(REPORT_MESSAGE, { id: secret, c: 'HATE' }, owner))).toBeUndefined();
    // Nobody reports their own message.
    expect(codeOf(await t.gql(REPORT_MESSAGE, { id: pub, c: 'HATE' }, member))).toBe('VALIDATION');
  });

  it('reports a direct message to the operators only', async () => {
    const dm = await seedConversation(t, { kind: 'direct', members: [outsider, member] });
    const msgId = await seedMessage(t, dm, member, 'threatening words');
    const res = await t.gql(REPORT_MESSAGE, { id: msgId, c: 'VIOLENCE' }, outsider);
    expect(res.body.data?.reportMessage.serverId).toBeNull();
    const ops = await t.gql(INSTANCE_REPORTS, { open: true }, operator);
    expect(ops.body.data?.instanceReports.map((r: { subjectId: string }) => r.subjectId)).toContain(
      msgId,
    );
  });

  it('snapshots a user and a workspace as they were', async () => {
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ displayName: 'Totally Real Bank' })
      .where('id', '=', member.id)
      .execute();
    const user = await t.gql(REPORT_USER, { id: member.id, c: 'IMPERSONATION' }, outsider);
    expect(user.body.data?.reportUser).toMatchObject({
      subjectKind: 'USER',
      subjectUsername: 'spammer',
      serverId: null,
      snapshot: { username: 'spammer', displayName: 'Totally Real Bank' },
    });
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ displayName: 'Innocent' })
      .where('id', '=', member.id)
      .execute();

    const wsr = await t.gql(
      REPORT_WORKSPACE,
      { id: ws.id, c: 'ILLEGAL', t: 'sells stuff' },
      member,
    );
    expect(wsr.body.data?.reportWorkspace).toMatchObject({
      subjectKind: 'WORKSPACE',
      subjectUsername: 'wsowner',
      // Reports about a workspace never go to its own moderators.
      serverId: null,
      snapshot: {
        workspaceName: 'Garden',
        workspaceDescription: 'plants',
        ownerUsername: 'wsowner',
      },
    });
    await t.ctx.db.kysely
      .updateTable('workspace')
      .set({ name: 'Renamed', description: null })
      .where('id', '=', ws.id)
      .execute();
    const list = (await t.gql(INSTANCE_REPORTS, {}, operator)).body.data?.instanceReports;
    const u = list.find((r: { id: string }) => r.id === user.body.data?.reportUser.id);
    expect(u.snapshot.displayName).toBe('Totally Real Bank');
    const w = list.find((r: { id: string }) => r.id === wsr.body.data?.reportWorkspace.id);
    expect(w.snapshot).toMatchObject({ workspaceName: 'Garden', workspaceDescription: 'plants' });

    // Unknown subjects, a workspace one is not in, oneself.
    expect(
      codeOf(
        await t.gql(REPORT_USER, { id: '01890000-0000-7000-8000-00000000dead', c: 'SPAM' }, owner),
      ),
    ).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(REPORT_WORKSPACE, { id: ws.id, c: 'SPAM' }, outsider))).toBe(
      'NOT_FOUND',
    );
    expect(codeOf(await t.gql(REPORT_USER, { id: owner.id, c: 'SPAM' }, owner))).toBe('VALIDATION');
  });

  it('makes a duplicate report of the same thing by the same person one report', async () => {
    const msgId = await seedMessage(t, ws.channelId, member, 'dup me');
    const a = await t.gql(REPORT_MESSAGE, { id: msgId, c: 'SPAM' }, moderator);
    const b = await t.gql(REPORT_MESSAGE, { id: msgId, c: 'HARASSMENT', t: 'again' }, moderator);
    expect(b.body.data?.reportMessage.id).toBe(a.body.data?.reportMessage.id);
    const [c, d] = await Promise.all([
      t.gql(REPORT_USER, { id: outsider.id, c: 'SPAM' }, moderator),
      t.gql(REPORT_USER, { id: outsider.id, c: 'SPAM' }, moderator),
    ]);
    expect(c.body.data?.reportUser.id).toBe(d.body.data?.reportUser.id);
    const rows = await t.ctx.db.kysely
      .selectFrom('abuse_report')
      .select('id')
      .where('reporterId', '=', moderator.id)
      .where('subjectId', 'in', [msgId, outsider.id])
      .execute();
    expect(rows).toHaveLength(2);
    // Another person reporting the same message is a report of their own.
    const e = await t.gql(REPORT_MESSAGE, { id: msgId, c: 'SPAM' }, owner);
    expect(e.body.data?.reportMessage.id).not.toBe(a.body.data?.reportMessage.id);
  });

  it('limits reporters to 10 new reports an hour', async () => {
    const reporter = await signUpAndIn(t);
    const targets: Agent[] = [];
    for (let i = 0; i < 11; i++) targets.push(await signUpAndIn(t));
    for (let i = 0; i < 10; i++) {
      const ok = await t.gql(REPORT_USER, { id: targets[i]!.id, c: 'SPAM' }, reporter);
      expect(ok.body.errors).toBeUndefined();
      clock.advance(60_000);
    }
    const over = await t.gql(REPORT_USER, { id: targets[10]!.id, c: 'SPAM' }, reporter);
    expect(codeOf(over)).toBe('RATE_LIMITED');
    // The first report leaves the window 50 minutes from now.
    expect(over.body.errors?.[0]?.extensions?.retryAfterSeconds).toBe(50 * 60);
    // A duplicate is returned as it is, limit or not.
    const dup = await t.gql(REPORT_USER, { id: targets[0]!.id, c: 'SPAM' }, reporter);
    expect(dup.body.errors).toBeUndefined();
    clock.advance(HOUR_MS - 10 * 60_000);
    const later = await t.gql(REPORT_USER, { id: targets[10]!.id, c: 'SPAM' }, reporter);
    expect(later.body.errors).toBeUndefined();
  });

  it('refuses bad input with VALIDATION (or a GraphQL error for an unknown category)', async () => {
    const long = 'x'.repeat(2001);
    expect(codeOf(await t.gql(REPORT_USER, { id: owner.id, c: 'SPAM', t: long }, outsider))).toBe(
      'VALIDATION',
    );
    const exact = await t.gql(
      REPORT_USER,
      { id: owner.id, c: 'OTHER', t: 'y'.repeat(2000) },
      outsider,
    );
    expect(exact.body.errors).toBeUndefined();
    const badCategory = await t.gql(REPORT_USER, { id: owner.id, c: 'RUDE' }, outsider);
    expect(badCategory.body.errors?.[0]?.message).toMatch(/ReportCategory/);
    // Without a session (and so without a CSRF token) nothing is filed.
    const anon = await t.gql(REPORT_USER, { id: owner.id, c: 'SPAM' });
    expect(anon.body.errors).toHaveLength(1);
    expect(anon.body.data ?? null).toBeNull();
  });

  it("lets the workspace's owner and Moderators see and resolve its message reports", async () => {
    const msgId = await seedMessage(t, ws.channelId, member, 'ws report');
    const report = (await t.gql(REPORT_MESSAGE, { id: msgId, c: 'HARASSMENT' }, owner)).body.data
      ?.reportMessage;

    for (const who of [owner, moderator]) {
      const list = await t.gql(WORKSPACE_REPORTS, { s: ws.id, open: true }, who);
      expect(list.body.errors).toBeUndefined();
      const ids = list.body.data?.workspaceReports.map((r: { id: string }) => r.id);
      expect(ids).toContain(report.id);
      // Reporters stay anonymous to workspace moderators.
      const mine = list.body.data?.workspaceReports.find((r: { id: string }) => r.id === report.id);
      expect(mine.reporterId).toBeNull();
    }
    // Oldest first.
    const all = (await t.gql(WORKSPACE_REPORTS, { s: ws.id }, owner)).body.data?.workspaceReports;
    const times = all.map((r: { createdAt: string }) => r.createdAt);
    expect([...times].sort()).toEqual(times);
    // Only message reports of this workspace: not the workspace report, not the DM report.
    expect(all.every((r: { subjectKind: string; serverId: string }) => r.serverId === ws.id)).toBe(
      true,
    );

    expect(codeOf(await t.gql(WORKSPACE_REPORTS, { s: ws.id }, member))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(WORKSPACE_REPORTS, { s: ws.id }, outsider))).toBe('NOT_FOUND');
    const resolveQ =
      'mutation($id: ID!) { resolveWorkspaceReport(id: $id) { id resolved resolvedBy } }';
    expect(codeOf(await t.gql(resolveQ, { id: report.id }, member))).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(resolveQ, { id: report.id }, outsider))).toBe('NOT_FOUND');

    const resolved = await t.gql(resolveQ, { id: report.id }, moderator);
    expect(resolved.body.data?.resolveWorkspaceReport).toMatchObject({
      resolved: true,
      resolvedBy: moderator.id,
    });
    const open = (await t.gql(WORKSPACE_REPORTS, { s: ws.id, open: true }, owner)).body.data
      ?.workspaceReports;
    expect(open.map((r: { id: string }) => r.id)).not.toContain(report.id);
    // The operators' queue is separate: still open there.
    const ops = (await t.gql(INSTANCE_REPORTS, { open: true }, operator)).body.data
      ?.instanceReports;
    expect(ops.map((r: { id: string }) => r.id)).toContain(report.id);
    // A report without a workspace is not a workspace's to resolve.
    const userReport = (await t.gql(REPORT_USER, { id: member.id, c: 'SPAM' }, owner)).body.data
      ?.reportUser;
    expect(codeOf(await t.gql(resolveQ, { id: userReport.id }, owner))).toBe('NOT_FOUND');
  });

  it('lists instance reports oldest first, resolves them from GraphQL and the CLI', async () => {
    const all = (await t.gql(INSTANCE_REPORTS, {}, operator)).body.data?.instanceReports;
    expect(all.length).toBeGreaterThan(5);
    const keys = all.map((r: { createdAt: string; id: string }) => `${r.createdAt}|${r.id}`);
    expect([...keys].sort()).toEqual(keys);
    // Paging with the cursor gives the same order.
    const first = (await t.gql(INSTANCE_REPORTS, { limit: 2 }, operator)).body.data
      ?.instanceReports;
    const next = (await t.gql(INSTANCE_REPORTS, { limit: 2, after: first[1].cursor }, operator))
      .body.data?.instanceReports;
    expect([...first, ...next].map((r: { id: string }) => r.id)).toEqual(
      all.slice(0, 4).map((r: { id: string }) => r.id),
    );

    const target = all[0];
    const q = 'mutation($id: ID!) { instanceResolveReport(id: $id) { id resolved resolvedBy } }';
    const before = (await auditRows(t)).length;
    const res = await t.gql(q, { id: target.id }, operator);
    expect(res.body.data?.instanceResolveReport).toEqual({
      id: target.id,
      resolved: true,
      resolvedBy: operator.id,
    });
    // Resolving again changes nothing and writes nothing.
    await t.gql(q, { id: target.id }, operator);
    const rows = (await auditRows(t)).slice(before);
    expect(rows.map((r) => [r.action, r.actorId, r.target])).toEqual([
      ['report.resolve', operator.id, `report:${target.id}`],
    ]);
    expect(codeOf(await t.gql(q, { id: '01890000-0000-7000-8000-00000000dead' }, operator))).toBe(
      'NOT_FOUND',
    );
    expect(codeOf(await t.gql(q, { id: 'garbage' }, operator))).toBe('NOT_FOUND');

    const open = (await t.gql(INSTANCE_REPORTS, { open: true }, operator)).body.data
      ?.instanceReports;
    expect(open.map((r: { id: string }) => r.id)).not.toContain(target.id);

    // The CLI sees the same queue and resolves with actor `cli`.
    const list = await cli(t, ['abuse-reports', 'list', '--open']);
    expect(list.code).toBe(0);
    expect(list.json.map((r: { id: string }) => r.id)).toEqual(
      open.map((r: { id: string }) => r.id),
    );
    expect(list.json[0]).toHaveProperty('subjectUsername');
    const everything = await cli(t, ['abuse-reports', 'list']);
    expect(everything.json.map((r: { id: string }) => r.id)).toContain(target.id);
    const resolve = await cli(t, ['abuse-reports', 'resolve', open[0].id]);
    expect(resolve.code).toBe(0);
    expect(resolve.json).toMatchObject({ id: open[0].id, resolved: true, resolvedBy: 'cli' });
    const missing = await cli(t, [
      'abuse-reports',
      'resolve',
      '01890000-0000-7000-8000-00000000dead',
    ]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/NOT_FOUND/);
    const cliRows = (await auditRows(t)).filter(
      (r) => r.actorId === 'cli' && r.action === 'report.resolve',
    );
    expect(cliRows.map((r) => [r.action, r.target])).toEqual([
      ['report.resolve', `report:${open[0].id}`],
    ]);
  });
});
