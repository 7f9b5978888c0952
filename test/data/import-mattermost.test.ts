import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { createTestDatabase, type TestDatabase } from '../_util/app.js';
import { cli } from '../cli/cli-io.js';

import { dumpTables } from './_dump.js';

// svc import mattermost, run as the command on the fixture in fixtures/mattermost (Mattermost's
// bulk import format, one JSON object a line), on the database the suite runs on.

const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'mattermost', 'bulk.jsonl');

/** A column of a dumped row. */
const col = (row: string, name: string) =>
  (JSON.parse(row) as [string, string | null][]).find(([k]) => k === name)?.[1] ?? null;

describe('svc import mattermost', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-import-mm-'));
  const databases: TestDatabase[] = [];

  async function migrated(): Promise<TestDatabase> {
    const d = await createTestDatabase();
    databases.push(d);
    expect((await cli(['migrate'], d.env)).code).toBe(0);
    return d;
  }

  afterAll(async () => {
    for (const d of databases) await d.drop();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('imports teams, channels, people, posts with replies and reactions, direct messages; twice changes nothing', async () => {
    const d = await migrated();
    const dry = await cli(['import', 'mattermost', FIXTURE, '--dry-run'], d.env);
    expect(dry.code).toBe(0);
    expect((await dumpTables(d)).message).toEqual([]);

    const run = await cli(['import', 'mattermost', FIXTURE], d.env);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.out);
    expect(report.created).toEqual({
      accounts: 3,
      workspaces: 1,
      workspaceMembers: 3,
      channels: 2,
      directConversations: 1,
      groupConversations: 1,
      conversationMembers: 10,
      messages: 7,
      replies: 3,
      reactions: 5,
      pins: 1,
      // The fixture is a bare .jsonl with no data/ beside it: its one file is only named.
      attachments: 0,
      customEmoji: 0,
    });
    expect(JSON.parse(dry.out).created).toEqual(report.created);
    expect(report.skipped).toEqual({ 'Mattermost system messages': 1 });
    expect(report.problems).toEqual([]);
    expect(report.files).toEqual([
      {
        name: 'welcome.png',
        location: 'data/20240501/teams/acme/channels/town-square/users/alice/welcome.png',
        conversation: '#town-square',
        at: '2024-05-01T10:00:00.000Z',
      },
    ]);

    const dump = await dumpTables(d);
    const usernames = new Map(dump.account!.map((r) => [col(r, 'id'), col(r, 'username')]));
    const ws = dump.workspace!.filter((r) => col(r, 'isDirect') === '0');
    expect(ws.map((r) => col(r, 'name'))).toEqual(['Acme Inc']);
    const roles = dump
      .workspace_member!.filter((r) => col(r, 'workspaceId') === col(ws[0]!, 'id'))
      .map((r) => `${usernames.get(col(r, 'accountId'))}:${col(r, 'role')}`)
      .sort();
    // The team admin owns it (the format has no owner); team guests are guests.
    expect(roles).toEqual(['alice:owner', 'bob:member', 'carol:guest']);
    const channels = dump.conversation!.map((r) => [col(r, 'kind'), col(r, 'name'), col(r, 'isPrivate')]);
    expect(channels).toEqual(
      expect.arrayContaining([
        ['channel', 'town-square', '0'],
        ['channel', 'dev', '1'],
        ['direct', null, '1'],
        ['group', null, '1'],
      ]),
    );
    const messages = dump
      .message!.map((r) => ({
        text: col(r, 'text'),
        author: usernames.get(col(r, 'authorId')),
        at: Number(col(r, 'createdAt')),
        edited: col(r, 'editedAt'),
        root: col(r, 'threadRootId'),
        id: col(r, 'id'),
        replies: Number(col(r, 'replyCount')),
      }))
      .sort((a, b) => a.at - b.at);
    expect(messages.map((m) => [m.author, m.text])).toEqual([
      ['alice', 'Welcome to Acme, @bob and @carol! @channel see #dev\n📎 welcome.png'],
      ['bob', 'Thanks!'],
      ['carol', 'Glad to be here'],
      ['bob', 'Deploy is green'],
      ['alice', 'Lunch?'],
      ['bob', 'Sure'],
      ['carol', 'Hi both'],
    ]);
    expect(messages[0]).toMatchObject({ at: 1714557600000, edited: '1714557700000', replies: 2 });
    expect(messages[1]!.root).toBe(messages[0]!.id);
    expect(messages[5]!.root).toBe(messages[4]!.id);
    expect(dump.reaction!.map((r) => col(r, 'emoji')).sort()).toEqual(['✅', '❤️', '👋', '👍', '😄'].sort());
    expect(dump.pin!.map((r) => col(r, 'messageId'))).toEqual([messages[0]!.id]);

    const again = await cli(['import', 'mattermost', FIXTURE], d.env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out).existing).toEqual({ accounts: 3, workspaces: 1, conversations: 4, messages: 7, customEmoji: 0 });
    expect(await dumpTables(d)).toEqual(dump);
  });

  it('matches people to accounts by address, and reports malformed lines by number', async () => {
    const d = await migrated();
    // Bob is here already, under another name: the import gives him his posts, not a second account.
    const created = await cli(['account', 'create', 'robert', '--password-stdin', '--email', 'BOB@mm.example'], d.env, 'a long enough password\n');
    expect(created.code).toBe(0);
    const lines = fs.readFileSync(FIXTURE, 'utf8').trimEnd().split('\n');
    lines.splice(9, 0, '{"type":"post","post":{"team":"acme","channel":"town-square","user":"bob","message":"no time"}}');
    lines.splice(10, 0, '{"type":"post", "post": {');
    lines.splice(11, 0, '{"type":"post","post":{"team":"acme","channel":"nowhere","user":"bob","message":"lost","create_at":1714557600001}}');
    const file = path.join(scratch, 'broken.jsonl');
    fs.writeFileSync(file, `${lines.join('\n')}\n`);

    const run = await cli(['import', 'mattermost', file], d.env);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.out);
    expect(report.problems).toEqual([
      { file: 'broken.jsonl', line: 10, message: 'a post needs "create_at" (ms since 1970)' },
      { file: 'broken.jsonl', line: 11, message: expect.stringMatching(/^not valid JSON/) },
      { file: 'broken.jsonl', line: 12, message: 'no channel "nowhere" of team "acme" in the export' },
    ]);
    expect(report.created).toMatchObject({ accounts: 2, messages: 7 });
    expect(report.existing.accounts).toBe(1);
    const dump = await dumpTables(d);
    const robert = dump.account!.find((r) => col(r, 'username') === 'robert')!;
    expect(dump.message!.filter((r) => col(r, 'authorId') === col(robert, 'id')).map((r) => col(r, 'text')).sort()).toEqual(
      ['Deploy is green', 'Sure', 'Thanks!'],
    );
    expect(dump.account!.map((r) => col(r, 'username')).sort()).toEqual(['alice', 'carol', 'robert']);
  });
});
