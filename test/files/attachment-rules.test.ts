import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS, HOUR_MS, ManualClock } from '../../src/lib/clock.js';
import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import {
  codeOf,
  seedConversation,
  seedMember,
  seedMessage,
  seedWorkspace,
} from '../moderation/_helpers.js';

// finalizeAttachment's rules, who may download an unfinalized file, encrypted conversations,
// and the account purge removing the account's files (the blob going with the next sweep).

const CREATE = `mutation($c: ID!, $n: String!, $t: String) {
  createAttachment(input: { conversationId: $c, fileName: $n, contentType: $t }) { attachmentId uploadToken } }`;
const FINALIZE = `mutation($a: ID!, $m: ID!) {
  finalizeAttachment(input: { attachmentId: $a, messageId: $m }) { id } }`;
const REQUEST = `mutation($c: String!) { requestAccountDeletion(input: { confirmUsername: $c }) { scheduledFor } }`;
const BOUNDARY = 'rulesboundary';

describe('attachment rules', () => {
  let t: TestApp;
  let alice: Agent;
  let bob: Agent;
  let channelId: string;
  let otherChannelId: string;
  const clock = new ManualClock(Date.UTC(2030, 0, 1));

  beforeAll(async () => {
    t = await createTestApp({ clock });
    alice = await signUpAndIn(t);
    bob = await signUpAndIn(t);
    const ws = await seedWorkspace(t, alice);
    channelId = ws.channelId;
    await seedMember(t, ws.id, bob, 'member', [channelId]);
    otherChannelId = await seedConversation(t, {
      workspaceId: ws.id,
      kind: 'channel',
      members: [alice],
    });
  });
  afterAll(async () => t?.close());

  async function create(
    agent: Agent,
    conversationId = channelId,
    type: string | null = 'text/plain',
  ) {
    const res = await t.gql(CREATE, { c: conversationId, n: 'notes.txt', t: type }, agent);
    expect(res.body.errors).toBeUndefined();
    return res.body.data!.createAttachment as { attachmentId: string; uploadToken: string };
  }

  async function upload(
    agent: Agent,
    a: { attachmentId: string; uploadToken: string },
    bytes: Buffer,
    type = 'text/plain',
  ) {
    const body = Buffer.concat([
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="upload_token"\r\n\r\n${a.uploadToken}\r\n` +
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="attachment_id"\r\n\r\n${a.attachmentId}\r\n` +
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="x"\r\nContent-Type: ${type}\r\n\r\n`,
      ),
      bytes,
      Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
    ]);
    return t.inject({
      method: 'POST',
      url: '/api/files/upload',
      headers: {
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        ...agentHeaders(agent),
      },
      payload: body,
    });
  }

  const download = (agent: Agent, id: string) =>
    t.inject({
      method: 'GET',
      url: `/api/attachments/${id}/download`,
      headers: agentHeaders(agent),
    });

  it('finalizes only uploaded files, onto the caller’s own message in the same conversation', async () => {
    const a = await create(alice);
    const mine = await seedMessage(t, channelId, alice, 'mine');
    const bobs = await seedMessage(t, channelId, bob, 'bob');
    const elsewhere = await seedMessage(t, otherChannelId, alice, 'elsewhere');

    expect(codeOf(await t.gql(FINALIZE, { a: a.attachmentId, m: mine }, alice))).toBe('VALIDATION');
    // Before finalizing, only the uploader downloads it.
    expect((await upload(alice, a, Buffer.from('text'))).statusCode).toBe(200);
    expect((await download(alice, a.attachmentId)).statusCode).toBe(200);
    expect((await download(bob, a.attachmentId)).statusCode).toBe(404);

    expect(codeOf(await t.gql(FINALIZE, { a: a.attachmentId, m: bobs }, alice))).toBe('VALIDATION');
    expect(codeOf(await t.gql(FINALIZE, { a: a.attachmentId, m: elsewhere }, alice))).toBe(
      'VALIDATION',
    );
    expect(codeOf(await t.gql(FINALIZE, { a: a.attachmentId, m: mine }, bob))).toBe('NOT_FOUND');
    const ok = await t.gql(FINALIZE, { a: a.attachmentId, m: mine }, alice);
    expect(ok.body.errors).toBeUndefined();
    // Again on the same message: nothing changes; on another: CONFLICT.
    expect(
      (await t.gql(FINALIZE, { a: a.attachmentId, m: mine }, alice)).body.errors,
    ).toBeUndefined();
    const second = await seedMessage(t, channelId, alice, 'second');
    expect(codeOf(await t.gql(FINALIZE, { a: a.attachmentId, m: second }, alice))).toBe('CONFLICT');
    expect((await download(bob, a.attachmentId)).statusCode).toBe(200);
  });

  it('hides and then removes an attachment a finalize left on a message removed meanwhile', async () => {
    const a = await create(alice);
    expect((await upload(alice, a, Buffer.from('raced'))).statusCode).toBe(200);
    const message = await seedMessage(t, channelId, alice, 'raced');
    expect(
      (await t.gql(FINALIZE, { a: a.attachmentId, m: message }, alice)).body.errors,
    ).toBeUndefined();
    // What a finalize committing after the removal's hook leaves: a row on a deleted message.
    await t.ctx.db.kysely
      .updateTable('message')
      .set({ deletedAt: clock.now().getTime(), text: null })
      .where('id', '=', message)
      .execute();
    expect((await download(alice, a.attachmentId)).statusCode).toBe(404);
    expect(await t.ctx.services.attachments.expireUnfinalized()).toBeGreaterThanOrEqual(1);
    const rows = await t.ctx.db.kysely
      .selectFrom('attachment')
      .select('id')
      .where('id', '=', a.attachmentId)
      .execute();
    expect(rows).toEqual([]);
  });

  it('caps a message at 10 attachments', async () => {
    const message = await seedMessage(t, channelId, alice, 'many');
    for (let i = 0; i < 11; i++) {
      const a = await create(alice);
      expect((await upload(alice, a, Buffer.from(`file ${i}`))).statusCode).toBe(200);
      const res = await t.gql(FINALIZE, { a: a.attachmentId, m: message }, alice);
      if (i < 10) expect(res.body.errors).toBeUndefined();
      else {
        expect(codeOf(res)).toBe('VALIDATION');
        expect(res.body.errors![0]!.extensions!.limit).toBe(10);
      }
    }
  });

  it('refuses bad names and types at creation', async () => {
    const bad = async (n: string, ty: string | null) =>
      codeOf(await t.gql(CREATE, { c: channelId, n, t: ty }, alice));
    expect(await bad('', 'text/plain')).toBe('VALIDATION');
    expect(await bad('a/b.txt', 'text/plain')).toBe('VALIDATION');
    expect(await bad('x'.repeat(256), 'text/plain')).toBe('VALIDATION');
    expect(await bad('x.svg', 'image/svg+xml')).toBe('VALIDATION');
    expect(await bad('x.exe', 'application/x-msdownload')).toBe('VALIDATION');
    expect(await bad('x.bin', 'application/octet-stream')).toBe('VALIDATION');
    // Not a member of the conversation: as for a send.
    const eve = await signUpAndIn(t);
    expect(codeOf(await t.gql(CREATE, { c: channelId, n: 'x.txt', t: null }, eve))).toBe(
      'NOT_FOUND',
    );
  });

  it('serves a blob of an encrypted conversation as application/octet-stream named encrypted.bin', async () => {
    const dm = await seedConversation(t, { kind: 'direct', members: [alice, bob] });
    await t.ctx.db.kysely
      .updateTable('conversation')
      .set({ encrypted: 1 })
      .where('id', '=', dm)
      .execute();
    const a = await create(alice, dm, 'image/png');
    const ciphertext = Buffer.from([0x89, 0x00, 0xff, 0x10, 0x42, 0x99]);
    expect((await upload(alice, a, ciphertext, 'image/png')).statusCode).toBe(200);
    const message = await seedMessage(t, dm, alice, 'ciphertext');
    expect(
      (await t.gql(FINALIZE, { a: a.attachmentId, m: message }, alice)).body.errors,
    ).toBeUndefined();
    const res = await download(bob, a.attachmentId);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="encrypted.bin"; filename*=UTF-8''encrypted.bin`,
    );
    expect(res.rawPayload.equals(ciphertext)).toBe(true);
  });

  it('removes the files of a purged account; the blob goes with the next sweep', async () => {
    const carol = await signUpAndIn(t);
    const ws = await seedWorkspace(t, alice);
    await seedMember(t, ws.id, carol, 'member', [ws.channelId]);
    const a = await create(carol, ws.channelId);
    const bytes = Buffer.from(`carol's own file ${Date.now()}`);
    expect((await upload(carol, a, bytes)).statusCode).toBe(200);
    const message = await seedMessage(t, ws.channelId, carol, 'with a file');
    expect(
      (await t.gql(FINALIZE, { a: a.attachmentId, m: message }, carol)).body.errors,
    ).toBeUndefined();
    const row = await t.ctx.db.kysely
      .selectFrom('attachment')
      .select('sha256')
      .where('id', '=', a.attachmentId)
      .executeTakeFirstOrThrow();

    // One never finalized: no message removal reaches it, only the purge's own step.
    await create(carol, ws.channelId);
    expect((await t.gql(REQUEST, { c: carol.username }, carol)).body.errors).toBeUndefined();
    clock.advance(15 * DAY_MS);
    expect(await t.ctx.scheduler.runOnce('account-purge')).toBe(true);
    const left = await t.ctx.db.kysely
      .selectFrom('attachment')
      .select('id')
      .where('uploaderId', '=', carol.id)
      .execute();
    expect(left).toEqual([]);
    clock.advance(2 * HOUR_MS);
    // The blob's file time is the real time of the upload, long before the advanced clock.
    expect(await t.ctx.scheduler.runOnce('blob-sweep')).toBe(true);
    expect(await t.ctx.services.files.blobs.size(row.sha256!)).toBeNull();
  });
});
