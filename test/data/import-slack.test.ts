import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, createTestDatabase, type TestDatabase } from '../_util/app.js';
import { startSmtp } from '../_util/smtp.js';
import { cli } from '../cli/cli-io.js';

import { dumpTables } from './_dump.js';
import { zipFolder } from './_slack-generator.js';

// svc import slack, run as the command on a real ZIP built from the fixture in fixtures/slack
// (Slack's documented export layout), on the database the suite runs on (docs/operations.md,
// "Importing").

const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'slack');
const RESET =
  'mutation($t: String!, $p: String!) { resetPassword(input: { token: $t, newPassword: $p }) }';

describe('svc import slack', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-import-slack-'));
  const zip = path.join(scratch, 'Acme Slack export.zip');
  const databases: TestDatabase[] = [];

  async function migrated(): Promise<TestDatabase> {
    const d = await createTestDatabase();
    databases.push(d);
    expect((await cli(['migrate'], d.env)).code).toBe(0);
    return d;
  }

  beforeAll(async () => {
    await zipFolder(FIXTURE, zip);
  });
  afterAll(async () => {
    for (const d of databases) await d.drop();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('imports people, channels, conversations, threads, reactions, pins and edits', async () => {
    const d = await migrated();
    const tokens = path.join(scratch, 'claim.csv');
    const run = await cli(['import', 'slack', zip, '--claim-tokens', tokens], d.env);
    expect(run.err).toMatch(/^svc import slack: created 7 accounts, 1 workspaces, 5 conversations, 13 messages in/);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.out);
    expect(report.created).toMatchObject({
      accounts: 7,
      workspaces: 1,
      channels: 3,
      directConversations: 1,
      groupConversations: 1,
      messages: 13,
      replies: 2,
      reactions: 5,
      pins: 2,
    });
    expect(report.problems).toEqual([]);
    expect(report.skipped).toEqual({ 'Slack notices (joins, leaves, topic and pin changes)': 1 });
    // The file the export only links to is listed, with where it was.
    expect(report.files).toEqual([
      {
        name: 'plan.pdf',
        location: 'https://files.slack.com/files-pri/T0ACME-F01PLAN/download/plan.pdf',
        conversation: '#general',
        at: '2023-11-14T22:20:00.000Z',
      },
    ]);
    // `admin` is reserved here: renamed, and said so. No address: the operator hands it over.
    expect(report.accounts).toContainEqual({
      username: 'user-admin',
      sourceUsername: 'admin',
      email: null,
      claim: 'operator',
    });
    expect(report.accounts).toContainEqual({
      username: 'alice',
      email: 'alice@acme.example',
      claim: 'password-reset',
    });

    const smtp = await startSmtp();
    const t = await createTestApp({
      database: d,
      env: { SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: String(smtp.port), SVC_SMTP_FROM: 'svc <noreply@example.org>' },
    });
    try {
      const db = t.ctx.db.kysely;
      const ws = await db.selectFrom('workspace').selectAll().where('isDirect', '=', 0).execute();
      expect(ws.map((w) => w.name)).toEqual(['Acme Slack export']);
      const roles = await db
        .selectFrom('workspace_member as m')
        .innerJoin('account as a', 'a.id', 'm.accountId')
        .select(['a.username', 'm.role'])
        .where('m.workspaceId', '=', ws[0]!.id)
        .orderBy('a.username')
        .execute();
      // The primary owner owns it; admins moderate; restricted people are guests; the
      // deactivated person has an account (their messages keep their name) but no seat.
      expect(roles).toEqual([
        { username: 'alice', role: 'owner' },
        { username: 'bob.builder', role: 'moderator' },
        { username: 'carol', role: 'member' },
        { username: 'dave', role: 'guest' },
        { username: 'deploybot', role: 'member' },
        { username: 'user-admin', role: 'member' },
      ]);
      const convs = await db
        .selectFrom('conversation')
        .select(['name', 'kind', 'isPrivate', 'archivedAt', 'topic', 'createdAt'])
        .orderBy('createdAt')
        .execute();
      expect(convs.map((c) => [c.name, c.kind, Number(c.isPrivate), c.archivedAt !== null])).toEqual([
        ['general', 'channel', 0, false],
        ['random', 'channel', 0, true],
        ['secret', 'channel', 1, false],
        [null, 'direct', 1, false],
        [null, 'group', 1, false],
      ]);
      expect(Number(convs[0]!.createdAt)).toBe(1_700_000_000_000);

      const messages = await db
        .selectFrom('message as m')
        .innerJoin('account as a', 'a.id', 'm.authorId')
        .select(['m.id', 'm.text', 'a.username', 'm.createdAt', 'm.editedAt', 'm.threadRootId', 'm.replyCount', 'm.lastReplyAt'])
        .orderBy('m.createdAt')
        .execute();
      expect(messages).toHaveLength(13);
      const welcome = messages[0]!;
      // Original author and time; Slack's markup as svc text; the mention resolved.
      expect(welcome).toMatchObject({
        username: 'alice',
        text: 'Welcome @channel! Read [the handbook](https://acme.example/handbook) & ask @bob.builder if <anything> is unclear',
        replyCount: 2,
      });
      expect(Number(welcome.createdAt)).toBe(1_700_000_100_000);
      expect(Number(welcome.lastReplyAt)).toBe(1_700_086_400_000);
      const replies = messages.filter((m) => m.threadRootId === welcome.id);
      expect(replies.map((r) => [r.username, r.text])).toEqual([
        ['bob.builder', 'Thanks @alice, will do'],
        ['carol', 'Late reply'],
      ]);
      expect(Number(replies[0]!.editedAt)).toBe(1_700_000_300_000);
      expect(messages.find((m) => m.text === 'Deployed v1.2.3')?.username).toBe('deploybot');
      expect(messages.find((m) => m.text === 'Bye all')?.username).toBe('erin');
      expect(messages.find((m) => m.username === 'carol' && m.text?.startsWith('Here is'))?.text).toBe(
        'Here is the plan\n📎 plan.pdf',
      );
      // Ids follow the original times, as svc's own do.
      expect(messages.map((m) => m.id)).toEqual([...messages.map((m) => m.id)].sort());

      const reactions = await db
        .selectFrom('reaction as r')
        .innerJoin('account as a', 'a.id', 'r.accountId')
        .select(['a.username', 'r.emoji', 'r.messageId'])
        .orderBy('a.username')
        .orderBy('r.emoji')
        .execute();
      expect(reactions.filter((r) => r.messageId === welcome.id).map((r) => [r.username, r.emoji])).toEqual([
        ['bob.builder', '👍'],
        ['bob.builder', '🙌🏻'],
        ['carol', '👍'],
        ['dave', ':partyparrot:'],
      ]);
      const pins = await db.selectFrom('pin as p').innerJoin('account as a', 'a.id', 'p.pinnedBy').select(['p.messageId', 'a.username', 'p.pinnedAt']).orderBy('p.pinnedAt').execute();
      expect(pins.map((p) => [p.messageId, p.username, Number(p.pinnedAt)])).toEqual([
        [welcome.id, 'bob.builder', 1_700_000_500_000],
        [messages.find((m) => m.username === 'dave')!.id, 'dave', 1_700_000_700_000],
      ]);
      // Imported history is read, and searchable.
      const markers = await db.selectFrom('conversation_member').select('lastReadAt').execute();
      expect(markers.every((m) => m.lastReadAt !== null)).toBe(true);
      const found = await db.selectFrom('message_search').select('messageId').execute();
      expect(found).toHaveLength(13);

      // The person claims their account: a password reset to the address from the export.
      const login = (p: string) =>
        t.gql('mutation($p: String!) { login(input: { username: "alice", password: $p }) { user { id } } }', { p });
      expect((await login('!unclaimed-import')).body.errors?.[0]?.extensions?.code).toBeDefined();
      await t.gql('mutation { requestPasswordReset(input: { emailOrUsername: "alice@acme.example" }) }', {});
      for (let i = 0; i < 200 && smtp.messages.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      const token = /Reset token: ([A-Za-z0-9_-]{43})/.exec(smtp.messages[0]!.raw)![1];
      expect((await t.gql(RESET, { t: token, p: 'my claimed password' })).body.errors).toBeUndefined();
      const signedIn = await login('my claimed password');
      expect(signedIn.body.data?.login.user.id).toBe(welcome && (await db.selectFrom('account').select('id').where('username', '=', 'alice').executeTakeFirstOrThrow()).id);

      // Dave has no address: the operator hands him the token the import wrote for him.
      expect(report.claimTokens).toEqual({ file: tokens, tokens: 7 });
      expect(fs.statSync(tokens).mode & 0o777).toBe(0o600);
      const csv = fs.readFileSync(tokens, 'utf8').trim().split('\n');
      expect(csv[0]).toBe('username,email,token');
      const dave = csv.find((l) => l.startsWith('dave,'))!.split(',')[2]!;
      expect((await t.gql(RESET, { t: dave, p: 'dave claims this' })).body.errors).toBeUndefined();
      const daveIn = await t.gql(
        'mutation { login(input: { username: "dave", password: "dave claims this" }) { user { id } } }',
        {},
      );
      expect(daveIn.body.data?.login.user.id).toBeDefined();
      // A second run gives tokens only to those still unclaimed (alice and dave are not).
      const again = await cli(['import', 'slack', zip, '--claim-tokens', tokens], d.env);
      expect(JSON.parse(again.out).claimTokens).toEqual({ file: tokens, tokens: 5 });
      expect(fs.readFileSync(tokens, 'utf8')).not.toMatch(/^(alice|dave),/m);
    } finally {
      await t.close();
      await smtp.close();
    }
  });

  it('changes nothing when run again, and a dry run writes nothing', async () => {
    const d = await migrated();
    const dry = await cli(['import', 'slack', zip, '--dry-run'], d.env);
    expect(dry.code).toBe(0);
    expect(dry.err).toMatch(/would create 7 accounts, 1 workspaces, 5 conversations, 13 messages/);
    const empty = await dumpTables(d);
    expect(empty.account).toEqual([]);
    expect(empty.message).toEqual([]);

    const first = await cli(['import', 'slack', zip], d.env);
    expect(first.code).toBe(0);
    const once = await dumpTables(d);
    // The dry run said what the run made.
    expect(JSON.parse(first.out).created).toEqual(JSON.parse(dry.out).created);

    const again = await cli(['import', 'slack', zip], d.env);
    expect(again.code).toBe(0);
    const report = JSON.parse(again.out);
    expect(report.created).toMatchObject({ accounts: 0, workspaces: 0, channels: 0, messages: 0, reactions: 0 });
    expect(report.existing).toEqual({ accounts: 7, workspaces: 1, conversations: 5, messages: 13, customEmoji: 0 });
    expect(await dumpTables(d)).toEqual(once);
  });

  it('names the file and line of malformed items and imports the rest', async () => {
    const d = await migrated();
    const dir = path.join(scratch, 'broken');
    fs.cpSync(FIXTURE, dir, { recursive: true });
    // A message without its time, a message that is not JSON, a channel without a name.
    const day = path.join(dir, 'general', '2023-11-15.json');
    fs.writeFileSync(
      day,
      '[\n  { "type": "message", "text": "no time", "user": "U01ALICE" },\n  { "type": "message", "text": "cut" "user": "U01ALICE" },\n  { "type": "message", "text": "fine", "user": "U01ALICE", "ts": "1700090000.000100" }\n]\n',
    );
    const channels = JSON.parse(fs.readFileSync(path.join(dir, 'channels.json'), 'utf8'));
    delete channels[1].name;
    fs.writeFileSync(path.join(dir, 'channels.json'), JSON.stringify(channels, null, 4));

    const run = await cli(['import', 'slack', dir], d.env);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.out);
    expect(report.problems).toEqual([
      { file: 'channels.json', line: expect.any(Number), message: 'a conversation needs an "id" and a "name"' },
      { file: 'general/2023-11-15.json', line: 2, message: 'a message needs a "ts" such as "1700000000.000100"' },
      { file: 'general/2023-11-15.json', line: 3, message: expect.stringMatching(/^not valid JSON/) },
    ]);
    expect(report.problems[0].line).toBeGreaterThan(1);
    // Nothing of the broken items; everything else (random's message had no channel to go to).
    expect(report.created).toMatchObject({ channels: 2, messages: 11 });
    const texts = (await dumpTables(d)).message!.map((r) => JSON.parse(r).find(([k]: [string]) => k === 'text')[1]);
    expect(texts).toContain('fine');
    expect(texts).not.toContain('no time');
    expect(texts).not.toContain('Random thought');
  });

  it('refuses what is not a Slack export, and an owner who does not exist', async () => {
    const d = await migrated();
    const notZip = path.join(scratch, 'not.zip');
    fs.writeFileSync(notZip, 'hello');
    const bad = await cli(['import', 'slack', notZip], d.env);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/not a ZIP archive/);
    const noUsers = await cli(['import', 'slack', path.join(FIXTURE, 'general')], d.env);
    expect(noUsers.code).toBe(1);
    expect(noUsers.err).toMatch(/is not a Slack export: it has no users.json/);
    const owner = await cli(['import', 'slack', zip, '--owner', 'nobody'], d.env);
    expect(owner.code).toBe(1);
    expect(owner.err).toMatch(/no account is named "nobody"/);
    expect((await dumpTables(d)).account).toEqual([]);
  });
});
