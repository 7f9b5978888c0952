import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  validateAgainst,
  type Schema,
} from '../../src/services/plugins/json-schema-subset.js';
import { buildWorld, type World } from '../_util/world.js';
import { cli } from '../cli/cli-io.js';

// `svc export workspace <id>` and `svc export account <username>` run as commands on the world
// (every kind of object, an encrypted conversation, stored files), on the run's database: every
// record checked against docs/export.schema.json, every part against the manifest, every file
// against its name (docs/export.md).

const SCHEMA = JSON.parse(
  fs.readFileSync(path.join(import.meta.dirname, '../../docs/export.schema.json'), 'utf8'),
) as Schema;

interface Manifest {
  scope: { kind: string; id: string };
  parts: { file: string; record: string; rows: number; bytes: number; sha256: string }[];
  files: { count: number; bytes: number };
  encryption: string;
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** Reads an export back, checking it whole; its records by file. */
function readExport(dir: string): { manifest: Manifest; records: Record<string, any[]> } {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  expect(validateAgainst(manifest, SCHEMA)).toEqual([]);
  const records: Record<string, any[]> = {};
  for (const part of manifest.parts as Manifest['parts']) {
    const text = fs.readFileSync(path.join(dir, part.file));
    expect(sha256(text), part.file).toBe(part.sha256);
    expect(text.length).toBe(part.bytes);
    const lines = text.toString('utf8').split('\n').filter(Boolean);
    expect(lines.length, part.file).toBe(part.rows);
    const schema = { $ref: `#/$defs/${part.record}`, $defs: SCHEMA.$defs } as Schema;
    records[part.file] = lines.map((line) => {
      const value = JSON.parse(line);
      expect(validateAgainst(value, schema), `${part.file}: ${line}`).toEqual([]);
      return value;
    });
  }
  const files = fs.readdirSync(path.join(dir, 'files'));
  expect(files.length).toBe(manifest.files.count);
  for (const f of files) expect(sha256(fs.readFileSync(path.join(dir, 'files', f)))).toBe(f);
  return { manifest, records };
}

describe('svc export', () => {
  let world: World;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-export-test-'));

  beforeAll(async () => {
    world = await buildWorld();
  }, 180_000);
  afterAll(async () => {
    await world?.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  const env = () => world.t.database.env;

  it('writes a workspace: people, channels, messages and what hangs off them, files', async () => {
    const dir = path.join(scratch, 'workspace');
    const run = await cli(['export', 'workspace', world.ids.workspace, dir], env());
    expect(run.err).toMatch(/^svc export: .* records in \d+ files, \d+ stored files -> .* in [\d.]+ s\n$/);
    expect(run.code).toBe(0);
    const { manifest, records } = readExport(dir);
    expect(JSON.parse(run.out)).toMatchObject({ path: dir, files: manifest.files.count });
    expect(manifest.scope).toMatchObject({ kind: 'workspace', id: world.ids.workspace });

    const { people, ids } = world;
    expect(records['workspace.jsonl']).toEqual([expect.objectContaining({ id: ids.workspace })]);
    const memberIds = records['members.jsonl']!.map((m) => m.id);
    for (const who of [people.owner, people.member, people.guest]) expect(memberIds).toContain(who.id);
    expect(memberIds).not.toContain(people.stranger.id);
    const convIds = records['conversations.jsonl']!.map((c) => c.id);
    for (const c of [ids.general, ids.random, ids.privateChannel, ids.archivedChannel]) {
      expect(convIds).toContain(c);
    }
    // Direct conversations are not the workspace's.
    expect(convIds).not.toContain(ids.direct);
    const messages = records['messages.jsonl']!;
    const hello = messages.find((m) => m.id === ids.message);
    expect(hello).toMatchObject({ conversationId: ids.general, authorId: people.member.id });
    expect(hello.text).toMatch(/the world is ready/);
    expect(messages.find((m) => m.id === ids.threadReply)).toMatchObject({ threadRootId: ids.message });
    expect(messages.some((m) => m.text === 'only for the private channel')).toBe(true);
    expect(records['message_edits.jsonl']).toEqual([
      expect.objectContaining({ previousText: 'first words', editorId: people.member.id }),
    ]);
    expect(records['reactions.jsonl']).toContainEqual(
      expect.objectContaining({ messageId: ids.message, emoji: '👍', accountId: people.member.id }),
    );
    expect(records['pins.jsonl']).toContainEqual(expect.objectContaining({ messageId: ids.message }));
    const [file] = records['attachments.jsonl']!.filter((a) => a.id === ids.attachment);
    expect(file).toMatchObject({ fileName: 'notes.txt', file: expect.stringMatching(/^files\//) });
    expect(fs.readFileSync(path.join(dir, file.file), 'utf8')).toBe('notes of the world\n');
    const [emoji] = records['custom_emoji.jsonl']!;
    expect(emoji).toMatchObject({ name: 'world', file: expect.stringMatching(/^files\//) });
  });

  it("writes an account: the person's own records only, encrypted messages as ciphertext", async () => {
    const { people, ids } = world;
    const dir = path.join(scratch, 'member');
    const run = await cli(['export', 'account', people.member.username, dir], env());
    expect(run.code).toBe(0);
    const { records } = readExport(dir);
    expect(records['account.jsonl']).toEqual([
      expect.objectContaining({ id: people.member.id, username: people.member.username }),
    ]);
    expect(records['sessions.jsonl']!.length).toBeGreaterThan(0);
    expect(records['workspaces.jsonl']).toContainEqual(
      expect.objectContaining({ id: ids.workspace, role: 'member' }),
    );
    const messages = records['messages.jsonl']!;
    expect(messages.map((m) => m.id)).toContain(ids.message);
    expect(messages.every((m) => m.authorId === people.member.id)).toBe(true);
    expect(records['reactions.jsonl']!.every((r) => r.accountId === people.member.id)).toBe(true);
    expect(records['attachments.jsonl']!.map((a) => a.id)).toContain(ids.attachment);

    const ownerDir = path.join(scratch, 'owner');
    expect((await cli(['export', 'account', people.owner.username, ownerDir], env())).code).toBe(0);
    const owner = readExport(ownerDir);
    expect(owner.manifest.encryption).toMatch(/ciphertext the server holds/);
    expect(owner.records['conversations.jsonl']).toContainEqual(
      expect.objectContaining({ id: ids.encrypted, encrypted: true }),
    );
    const secret = owner.records['messages.jsonl']!.find((m) => m.id === ids.encryptedMessage);
    expect(secret).toMatchObject({ text: null, ciphertext: expect.stringMatching(/^[A-Za-z0-9_-]+$/) });
    expect(JSON.stringify(owner.records)).not.toContain('a secret');
  });

  it('refuses what does not exist and a folder that holds anything, saying why', async () => {
    const none = await cli(['export', 'workspace', '01890000-0000-7000-8000-000000000000', path.join(scratch, 'x')], env());
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/there is no workspace with id/);
    expect(fs.existsSync(path.join(scratch, 'x'))).toBe(false);
    const nobody = await cli(['export', 'account', 'nobody_here', path.join(scratch, 'y')], env());
    expect(nobody.code).toBe(1);
    expect(nobody.err).toMatch(/there is no account named nobody_here/);
    const full = path.join(scratch, 'full');
    fs.mkdirSync(full);
    fs.writeFileSync(path.join(full, 'keep.txt'), 'mine');
    const refused = await cli(['export', 'workspace', world.ids.workspace, full], env());
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/is not empty/);
    expect(fs.readdirSync(full)).toEqual(['keep.txt']);
  });
});
