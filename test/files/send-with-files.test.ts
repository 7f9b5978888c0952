import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { codeOf, seedMember, seedWorkspace } from '../moderation/_helpers.js';

// sendMessage with attachmentIds: a file sent alone needs no text; each file is checked before
// anything is sent and attached in the order given (docs/files.md).

const CREATE = `mutation($c: ID!, $n: String!) {
  createAttachment(input: { conversationId: $c, fileName: $n, contentType: "text/plain" }) { attachmentId uploadToken } }`;
const SEND = `mutation($c: ID!, $t: String!, $a: [ID!]) {
  sendMessage(input: { conversationId: $c, text: $t, attachmentIds: $a }) {
    id text attachments { id fileName } } }`;
const COUNT = `query($c: ID!) { messages(conversationId: $c) { items { id } } }`;

describe('sending a message with files', () => {
  let t: TestApp;
  let alice: Agent;
  let bob: Agent;
  let channelId: string;
  let otherChannelId: string;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await signUpAndIn(t);
    bob = await signUpAndIn(t);
    const ws = await seedWorkspace(t, alice);
    channelId = ws.channelId;
    await seedMember(t, ws.id, bob, 'member', [channelId]);
    const other = await seedWorkspace(t, alice, { name: 'Other' });
    otherChannelId = other.channelId;
  });
  afterAll(async () => t?.close());

  async function file(agent: Agent, name: string, conv = channelId, upload = true) {
    const res = await t.gql(CREATE, { c: conv, n: name }, agent);
    expect(res.body.errors).toBeUndefined();
    const a = res.body.data!.createAttachment as { attachmentId: string; uploadToken: string };
    if (upload) {
      const b = 'svcboundary1234';
      const body = Buffer.from(
        `--${b}\r\nContent-Disposition: form-data; name="upload_token"\r\n\r\n${a.uploadToken}\r\n` +
          `--${b}\r\nContent-Disposition: form-data; name="attachment_id"\r\n\r\n${a.attachmentId}\r\n` +
          `--${b}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\nhello\r\n` +
          `--${b}--\r\n`,
      );
      const up = await t.inject({
        method: 'POST',
        url: '/api/files/upload',
        headers: { 'content-type': `multipart/form-data; boundary=${b}`, ...agentHeaders(agent) },
        payload: body,
      });
      expect(up.statusCode).toBe(200);
    }
    return a.attachmentId;
  }

  const count = async () =>
    ((await t.gql(COUNT, { c: channelId }, alice)).body.data!.messages.items as unknown[]).length;

  it('sends files with no text, attached in the order given', async () => {
    const first = await file(alice, 'notes.txt');
    const second = await file(alice, 'plan.txt');
    const res = await t.gql(SEND, { c: channelId, t: '  ', a: [second, first] }, alice);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data!.sendMessage).toMatchObject({
      text: '',
      attachments: [
        { id: second, fileName: 'plan.txt' },
        { id: first, fileName: 'notes.txt' },
      ],
    });
  });

  it('still refuses empty text without files', async () => {
    const res = await t.gql(SEND, { c: channelId, t: ' ', a: [] }, alice);
    expect(codeOf(res)).toBe('VALIDATION');
  });

  it('sends nothing when a file cannot go on the message', async () => {
    const before = await count();
    const notUploaded = await file(alice, 'later.txt', channelId, false);
    const elsewhere = await file(alice, 'elsewhere.txt', otherChannelId);
    const bobs = await file(bob, 'bobs.txt');
    const ok = await file(alice, 'fine.txt');
    const cases: Array<[string[], string]> = [
      [[ok, notUploaded], 'VALIDATION'],
      [[elsewhere], 'VALIDATION'],
      [[bobs], 'NOT_FOUND'],
      [['not-an-id'], 'NOT_FOUND'],
      [Array.from({ length: 11 }, () => crypto.randomUUID()), 'VALIDATION'],
    ];
    for (const [ids, code] of cases) {
      expect(codeOf(await t.gql(SEND, { c: channelId, t: '', a: ids }, alice))).toBe(code);
    }
    // A file already on a message: CONFLICT.
    expect((await t.gql(SEND, { c: channelId, t: 'one', a: [ok] }, alice)).body.errors).toBe(
      undefined,
    );
    expect(codeOf(await t.gql(SEND, { c: channelId, t: 'two', a: [ok] }, alice))).toBe('CONFLICT');
    expect(await count()).toBe(before + 1);
  });
});
