import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createTestApp,
  createTestDatabase,
  TEST_DB,
  type Agent,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { cli } from '../cli/cli-io.js';

import { dumpBlobs, dumpIndexes, dumpTables } from './_dump.js';

// svc backup and svc restore, run as commands on real files (docs/operations.md, "Backups"): a
// populated instance is backed up while sends go on, restored into an empty database and data
// directory, and compared table by table and file by file.

const SEND = 'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }';

describe('svc backup and svc restore', () => {
  let source: TestDatabase;
  let t: TestApp;
  let owner: Agent;
  let channelId: string;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-backup-test-'));
  const targets: TestDatabase[] = [];

  beforeAll(async () => {
    source = await createTestDatabase();
    t = await createTestApp({ database: source });
    owner = await signUpAndIn(t);
    const member = await signUpAndIn(t);
    const ws = await t.gql(
      'mutation { createWorkspace(input: { name: "Backed up" }) { id channels { id } } }',
      {},
      owner,
    );
    channelId = ws.body.data!.createWorkspace.channels[0].id;
    const inv = await t.gql(
      'mutation($s: ID!) { createWorkspaceInvite(input: { serverId: $s }) { token } }',
      { s: ws.body.data!.createWorkspace.id },
      owner,
    );
    await t.gql(
      'mutation($t: String!) { joinWorkspace(token: $t) { id } }',
      { t: inv.body.data!.createWorkspaceInvite.token },
      member,
    );
    for (let i = 0; i < 20; i++) {
      const res = await t.gql(SEND, { i: { conversationId: channelId, text: `hello ${i} é ✓\ttab\nline` } }, i % 2 ? owner : member);
      expect(res.body.errors).toBeUndefined();
    }
    const first = await t.gql(SEND, { i: { conversationId: channelId, text: 'react to me' } }, owner);
    await t.gql(
      'mutation($m: ID!) { addReaction(messageId: $m, emoji: "👍") { id } }',
      { m: first.body.data!.sendMessage.id },
      member,
    );
    // Stored files: the store keeps whatever bytes it is given under their sha256.
    for (const body of ['one', 'two', 'three'.repeat(10_000)]) {
      await t.ctx.services.files.blobs.put(Readable.from([Buffer.from(body)]), { maxBytes: 1e7 });
    }
  });

  afterAll(async () => {
    await t?.close();
    await source?.drop();
    for (const d of targets) await d.drop();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  async function emptyTarget(): Promise<TestDatabase> {
    const d = await createTestDatabase();
    targets.push(d);
    return d;
  }

  it('round-trips every table and stored file, keys included', async () => {
    // Quiet: the app's periodic jobs (the search backfill) would change the source between the
    // backup and the comparison. The test under load below backs up a serving instance.
    const keys = t.ctx.keys.signingPublicRaw;
    await t.close();
    const dir = path.join(scratch, 'quiet');
    const run = await cli(['backup', dir], source.env);
    expect(run.err).toMatch(/^svc backup: .* in [\d.]+ s\n$/);
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.out);
    expect(printed.counts.message).toBe(21);
    expect(printed.files).toBe(3);
    // It holds the server's keys and every message: nothing in it is open to other users.
    const open: string[] = [];
    const walk = (d: string) => {
      if ((fs.statSync(d).mode & 0o077) !== 0) open.push(d);
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const full = path.join(d, e.name);
        if (e.isDirectory()) walk(full);
        else if ((fs.statSync(full).mode & 0o077) !== 0) open.push(full);
      }
    };
    walk(dir);
    expect(open).toEqual([]);

    const verified = await cli(['backup', '--verify', dir], {});
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.out)).toMatchObject({ whole: true, problems: [] });

    const target = await emptyTarget();
    const restored = await cli(['restore', dir], target.env);
    expect(restored.err).toMatch(/^svc restore: /);
    expect(restored.code).toBe(0);

    const [before, after] = [await dumpTables(source), await dumpTables(target)];
    t = await createTestApp({ database: source });
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    for (const table of Object.keys(before)) expect(after[table], table).toEqual(before[table]);
    expect(await dumpBlobs(target.dataDir)).toEqual(await dumpBlobs(source.dataDir));
    // Every index is there again (PostgreSQL's are dropped for the load and built after it).
    expect(await dumpIndexes(target)).toEqual(await dumpIndexes(source));

    // The restored instance serves: the same server keys, the same person signs in.
    const restoredApp = await createTestApp({ database: target });
    try {
      expect(restoredApp.ctx.keys.signingPublicRaw).toEqual(keys);
      const page = await restoredApp.gql(
        'mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { user { id } } }',
        { u: owner.username, p: 'correct horse battery staple' },
      );
      expect(page.body.data?.login.user.id).toBe(owner.id);
    } finally {
      await restoredApp.close();
    }
  });

  it('refuses a target that is not empty, saying why, and changes nothing', async () => {
    const dir = path.join(scratch, 'refused');
    expect((await cli(['backup', dir], source.env)).code).toBe(0);
    const before = await dumpTables(source);
    const run = await cli(['restore', dir], source.env);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/already (exists|holds)/);
    expect(await dumpTables(source)).toEqual(before);
    // A folder that holds anything is never written into.
    const again = await cli(['backup', dir], source.env);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/is not empty/);
  });

  it('finds a damaged part with --verify, and restore refuses it leaving the target empty', async () => {
    const dir = path.join(scratch, 'damaged');
    const manifest = JSON.parse((await cli(['backup', dir], source.env)).out);
    expect(manifest.dialect).toBeDefined();
    const part = source.pgSchema
      ? path.join(dir, 'database', 'message.copy')
      : path.join(dir, 'database.sqlite');
    const bytes = fs.readFileSync(part);
    bytes[Math.floor(bytes.length / 2)] ^= 0x01;
    fs.writeFileSync(part, bytes);
    const verified = await cli(['backup', '--verify', dir], {});
    expect(verified.code).toBe(1);
    expect(JSON.parse(verified.out).problems.join('\n')).toMatch(/damaged/);

    const target = await emptyTarget();
    const run = await cli(['restore', dir], target.env);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/damaged/);
    // Empty again: a second restore of a whole backup into it is accepted.
    expect(await dumpTables(target)).toEqual({});
    expect(await dumpBlobs(target.dataDir)).toEqual([]);
  });

  it('backs up while sends go on: nothing acknowledged before the snapshot is missing, nothing half-written', async () => {
    const acked: { id: string; at: number }[] = [];
    let sending = true;
    const senders = [owner, owner, owner].map(async (agent, n) => {
      for (let i = 0; sending; i++) {
        const res = await t.gql(SEND, { i: { conversationId: channelId, text: `load ${n}.${i}` } }, agent);
        if (res.body.data?.sendMessage) acked.push({ id: res.body.data.sendMessage.id, at: Date.now() });
      }
    });
    await new Promise((r) => setTimeout(r, 300));
    const startedAt = Date.now();
    const dir = path.join(scratch, 'under-load');
    const run = await cli(['backup', dir], source.env);
    sending = false;
    await Promise.all(senders);
    expect(run.code).toBe(0);
    const ackedBefore = acked.filter((a) => a.at < startedAt).map((a) => a.id);
    expect(ackedBefore.length).toBeGreaterThan(0);

    const target = await emptyTarget();
    expect((await cli(['restore', dir], target.env)).code).toBe(0);
    const restored = await dumpTables(target);
    const ids = new Set(restored.message!.map((r) => JSON.parse(r).find((f: string[]) => f[0] === 'id')[1]));
    for (const id of ackedBefore) expect(ids.has(id), id).toBe(true);
    // Every restored message came whole, with its search row, or (SQLite, where a send's row is
    // written a moment after it: search/held-terms.ts) sent after the snapshot's mark of held
    // rows, whose rows the restored server's start writes (the test of that: held-terms.test.ts).
    const field = (r: string, name: string) => JSON.parse(r).find((f: string[]) => f[0] === name)[1];
    const indexed = new Set(restored.message_search!.map((r) => field(r, 'messageId')));
    const held = restored.search_backfill?.find((r) => field(r, 'id') === 'held');
    const mark = held === undefined ? Infinity : Number(field(held, 'afterAt'));
    const lacking = restored.message!.filter((r) => !indexed.has(field(r, 'id')));
    if (TEST_DB === 'postgres') expect(lacking).toEqual([]);
    for (const r of lacking) expect(Number(field(r, 'createdAt'))).toBeGreaterThanOrEqual(mark);
    expect(restored.message!.length).toBe(JSON.parse(run.out).counts.message);
  });
});
