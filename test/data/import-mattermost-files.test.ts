import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { createTestDatabase, type TestDatabase } from '../_util/app.js';
import { cli } from '../cli/cli-io.js';

import { dumpBlobs, dumpTables } from './_dump.js';

// svc import mattermost on a ZIP as `mmctl export --attachments` writes it (import.jsonl and the
// files under data/): attachments stored and attached to their posts, custom emoji added to the
// workspace, each through the checks an upload gets; what is refused or absent stays named in
// the text and listed in the report with the reason.

const col = (row: string, name: string) =>
  (JSON.parse(row) as [string, string | null][]).find(([k]) => k === name)?.[1] ?? null;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function png(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } })
    .png()
    .toBuffer();
}

const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
);

interface Generated {
  zip: string;
  files: Record<string, Buffer>;
}

/** A Mattermost export with files: one channel post with six attachments, a reply, a DM. */
async function generate(dir: string): Promise<Generated> {
  const files: Record<string, Buffer> = {
    'data/teams/acme/photo.png': await png(64, 48),
    'data/teams/acme/notes.txt': Buffer.from('Minutes of the meeting\n'),
    'data/teams/acme/report.pdf': PDF,
    'data/teams/acme/fake.png': Buffer.from('not a picture at all\n'),
    'data/teams/acme/blob.bin': Buffer.alloc(64, 7),
    'data/teams/acme/huge.txt': Buffer.alloc(25 * 1024 * 1024 + 1, 0x61),
    'data/direct/plan.txt': Buffer.from('The plan\n'),
    'data/emoji/e1/image': await png(200, 200),
    'data/emoji/e2/image': Buffer.from('plain words, no picture\n'),
  };
  const at = 1714557600000;
  const lines = [
    { type: 'version', version: 1 },
    { type: 'emoji', emoji: { name: 'partyparrot', image: 'data/emoji/e1/image' } },
    { type: 'emoji', emoji: { name: 'x', image: 'data/emoji/e1/image' } },
    { type: 'emoji', emoji: { name: 'broken', image: 'data/emoji/e2/image' } },
    { type: 'emoji', emoji: { name: 'gone', image: 'data/emoji/e3/image' } },
    { type: 'team', team: { name: 'acme', display_name: 'Acme', type: 'O' } },
    { type: 'channel', channel: { team: 'acme', name: 'town-square', display_name: 'Town', type: 'O' } },
    ...['alice', 'bob'].map((username, i) => ({
      type: 'user',
      user: {
        username,
        email: `${username}@mm.example`,
        teams: [
          {
            name: 'acme',
            roles: i === 0 ? 'team_admin team_user' : 'team_user',
            channels: [{ name: 'town-square', roles: 'channel_user' }],
          },
        ],
      },
    })),
    {
      type: 'post',
      post: {
        team: 'acme',
        channel: 'town-square',
        user: 'alice',
        message: 'Files from the meeting',
        create_at: at,
        reactions: [{ user: 'bob', create_at: at + 5, emoji_name: 'partyparrot' }],
        attachments: [
          { path: 'data/teams/acme/photo.png' },
          { path: 'data/teams/acme/notes.txt' },
          { path: 'teams/acme/report.pdf' }, // relative to data/, as some exports write it
          { path: 'data/teams/acme/fake.png' },
          { path: 'data/teams/acme/blob.bin' },
          { path: 'data/teams/acme/missing.txt' },
          { path: '../../etc/passwd' },
        ],
        replies: [
          {
            user: 'bob',
            message: '',
            create_at: at + 10,
            attachments: [{ path: 'data/teams/acme/huge.txt' }],
          },
        ],
      },
    },
    { type: 'direct_channel', direct_channel: { members: ['alice', 'bob'] } },
    {
      type: 'direct_post',
      direct_post: {
        channel_members: ['alice', 'bob'],
        user: 'bob',
        message: '',
        create_at: at + 20,
        attachments: [{ path: 'data/direct/plan.txt' }],
      },
    },
  ];
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n') + '\n'), 'import.jsonl');
  for (const [name, bytes] of Object.entries(files)) zip.addBuffer(bytes, name);
  zip.end();
  const file = path.join(dir, 'export.zip');
  await new Promise<void>((resolve, reject) => {
    zip.outputStream.pipe(fs.createWriteStream(file)).on('close', resolve).on('error', reject);
  });
  return { zip: file, files };
}

describe('svc import mattermost: the files of a ZIP', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-import-mm-files-'));
  const databases: TestDatabase[] = [];

  afterAll(async () => {
    for (const d of databases) await d.drop();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('stores attachments and custom emoji as uploads would be, refuses what an upload would, and a second run changes nothing', async () => {
    const { zip, files } = await generate(scratch);
    const d = await createTestDatabase();
    databases.push(d);
    expect((await cli(['migrate'], d.env)).code).toBe(0);

    const dry = await cli(['import', 'mattermost', zip, '--dry-run'], d.env);
    expect(dry.code).toBe(1); // the emoji problems
    expect((await dumpTables(d)).attachment).toEqual([]);
    expect(await dumpBlobs(d.dataDir)).toEqual([]);

    const run = await cli(['import', 'mattermost', zip], d.env);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.out);
    expect(report.created).toMatchObject({ messages: 3, replies: 1, reactions: 1, attachments: 4, customEmoji: 1 });
    expect(JSON.parse(dry.out).created).toEqual(report.created);
    expect(report.problems).toEqual([
      { file: 'export.zip', line: 3, message: expect.stringMatching(/^emoji "x": an emoji name is 2 to 32/) },
      { file: 'export.zip', line: 4, message: 'emoji :broken:: images must be PNG, JPEG, GIF or WebP, not (none)' },
      { file: 'export.zip', line: 5, message: 'emoji :gone:: its image data/emoji/e3/image is not in the export' },
    ]);
    const listed = report.files.map((f: { name: string; reason?: string }) => [f.name, f.reason ?? null]);
    expect(listed).toEqual([
      ['fake.png', "the file's bytes do not match image/png"],
      ['blob.bin', 'files like blob.bin are not accepted as attachments'],
      ['missing.txt', null],
      ['passwd', null],
      ['huge.txt', 'the file is larger than 26214400 bytes'],
    ]);

    const dump = await dumpTables(d);
    const users = new Map(dump.account!.map((r) => [col(r, 'id'), col(r, 'username')]));
    const messages = new Map(dump.message!.map((r) => [col(r, 'id'), r]));
    const rows = dump.attachment!.map((r) => ({
      name: col(r, 'fileName'),
      type: col(r, 'contentType'),
      size: Number(col(r, 'sizeBytes')),
      dims: col(r, 'width') === null ? null : `${col(r, 'width')}x${col(r, 'height')}`,
      sha: col(r, 'sha256'),
      by: users.get(col(r, 'uploaderId')),
      text: col(messages.get(col(r, 'messageId'))!, 'text'),
      space: col(r, 'workspaceId') === DIRECT_SPACE_ID ? 'direct' : 'acme',
      finalized: col(r, 'finalizedAt') !== null && col(r, 'uploadedAt') !== null,
    }));
    const post = 'Files from the meeting\n📎 fake.png\n📎 blob.bin\n📎 missing.txt\n📎 passwd';
    expect(rows.sort((a, b) => a.name!.localeCompare(b.name!))).toEqual([
      { name: 'notes.txt', type: 'text/plain', size: 23, dims: null, sha: sha(files['data/teams/acme/notes.txt']!), by: 'alice', text: post, space: 'acme', finalized: true },
      { name: 'photo.png', type: 'image/png', size: files['data/teams/acme/photo.png']!.length, dims: '64x48', sha: sha(files['data/teams/acme/photo.png']!), by: 'alice', text: post, space: 'acme', finalized: true },
      { name: 'plan.txt', type: 'text/plain', size: 9, dims: null, sha: sha(files['data/direct/plan.txt']!), by: 'bob', text: '', space: 'direct', finalized: true },
      { name: 'report.pdf', type: 'application/pdf', size: PDF.length, dims: null, sha: sha(PDF), by: 'alice', text: post, space: 'acme', finalized: true },
    ]);
    expect(dump.message!.map((r) => col(r, 'text'))).toContain('📎 huge.txt');

    // The stored bytes are the export's; the emoji image is re-encoded to 128 pixels.
    const blobs = await dumpBlobs(d.dataDir);
    for (const r of rows) expect(blobs).toContain(r.sha);
    const blobFile = (s: string) => path.join(d.dataDir, 'blobs', s.slice(0, 2), s.slice(2, 4), s);
    expect(sha(fs.readFileSync(blobFile(rows[1]!.sha!)))).toBe(rows[1]!.sha);
    const [emoji] = dump.custom_emoji!;
    expect([col(emoji!, 'name'), col(emoji!, 'width'), col(emoji!, 'height'), col(emoji!, 'contentType')]).toEqual([
      'partyparrot',
      '128',
      '128',
      'image/png',
    ]);
    const emojiSha = /^avatars\/([0-9a-f]{64})\.png$/.exec(col(emoji!, 'imagePath')!)![1]!;
    await expect(sharp(fs.readFileSync(blobFile(emojiSha))).metadata()).resolves.toMatchObject({ width: 128 });
    expect(dump.reaction!.map((r) => col(r, 'emoji'))).toEqual([':partyparrot:']);

    const again = await cli(['import', 'mattermost', zip], d.env);
    const second = JSON.parse(again.out);
    expect(second.created).toMatchObject({ messages: 0, attachments: 0, customEmoji: 0 });
    expect(second.existing).toMatchObject({ messages: 3, customEmoji: 1 });
    expect(await dumpTables(d)).toEqual(dump);
  });
});
