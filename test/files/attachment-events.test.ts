import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { BusEvent } from '../../src/events/bus.js';
import { workspaceTopic } from '../../src/events/catalog.js';
import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { conversationOf, ok, recordUser, send } from '../conversations/_helpers.js';
import { seedMember, seedWorkspace } from '../moderation/_helpers.js';

// finalizeAttachment announces the file with MessageAttachmentAdded (docs/events.md), to the
// audience of the message's own events: the workspace topic for a channel, each member's user
// topic for a direct conversation. Readers show it without reloading the message.
const CREATE = `mutation($c: ID!, $n: String!) {
  createAttachment(input: { conversationId: $c, fileName: $n }) { attachmentId uploadToken } }`;
const FINALIZE = `mutation($a: ID!, $m: ID!) {
  finalizeAttachment(input: { attachmentId: $a, messageId: $m }) { id } }`;

function form(a: { attachmentId: string; uploadToken: string }, file: Buffer): Buffer {
  const b = 'svcboundary1234';
  return Buffer.concat([
    Buffer.from(
      `--${b}\r\nContent-Disposition: form-data; name="upload_token"\r\n\r\n${a.uploadToken}\r\n` +
        `--${b}\r\nContent-Disposition: form-data; name="attachment_id"\r\n\r\n${a.attachmentId}\r\n` +
        `--${b}\r\nContent-Disposition: form-data; name="file"; filename="dot.png"\r\nContent-Type: image/png\r\n\r\n`,
    ),
    file,
    Buffer.from(`\r\n--${b}--\r\n`),
  ]);
}

describe('MessageAttachmentAdded', () => {
  let t: TestApp;
  let alice: Agent;
  let bob: Agent;
  let image: Buffer;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await signUpAndIn(t);
    bob = await signUpAndIn(t);
    image = await sharp({
      create: { width: 3, height: 2, channels: 3, background: { r: 9, g: 9, b: 9 } },
    })
      .png()
      .toBuffer();
  });
  afterAll(async () => t?.close());

  /** Creates, uploads and finalizes one image onto `messageId`; answers the attachment id. */
  async function attach(conversationId: string, messageId: string): Promise<string> {
    const a = ok(await t.gql(CREATE, { c: conversationId, n: 'dot.png' }, alice)).createAttachment;
    const up = await t.inject({
      method: 'POST',
      url: '/api/files/upload',
      headers: {
        'content-type': 'multipart/form-data; boundary=svcboundary1234',
        ...agentHeaders(alice),
      },
      payload: form(a, image),
    });
    expect(up.statusCode).toBe(200);
    ok(await t.gql(FINALIZE, { a: a.attachmentId, m: messageId }, alice));
    return a.attachmentId;
  }

  const expected = (messageId: string, id: string) => ({
    messageId,
    attachment: {
      id,
      fileName: 'dot.png',
      contentType: 'image/png',
      sizeBytes: image.length,
      width: 3,
      height: 2,
      url: `/api/attachments/${id}/download`,
    },
  });

  it('reaches the channel’s workspace topic once, with the attachment as messages list it', async () => {
    const ws = await seedWorkspace(t, alice);
    await seedMember(t, ws.id, bob, 'member', [ws.channelId]);
    const message = await send(t, alice, ws.channelId, 'see attached');
    const events: BusEvent[] = [];
    const stop = t.ctx.bus.subscribe(workspaceTopic(ws.id), (e) => events.push(e));
    try {
      const id = await attach(ws.channelId, message.id);
      const added = events.filter((e) => e.type === 'MessageAttachmentAdded');
      expect(added).toHaveLength(1);
      expect(added[0]!.payload).toMatchObject({
        ...expected(message.id, id),
        serverId: ws.id,
        conversationId: ws.channelId,
        audience: { kind: 'channel', conversationId: ws.channelId },
      });
      // Finalizing the same file onto the same message again changes nothing and says nothing.
      ok(await t.gql(FINALIZE, { a: id, m: message.id }, alice));
      expect(events.filter((e) => e.type === 'MessageAttachmentAdded')).toHaveLength(1);
    } finally {
      stop();
    }
  });

  it('reaches each member of a direct conversation on their own topic', async () => {
    const dm = (await conversationOf(t, alice, [bob])).conversation.id as string;
    const message = await send(t, alice, dm, 'a file for you');
    const bobs = recordUser(t, bob.id);
    const alices = recordUser(t, alice.id);
    try {
      const id = await attach(dm, message.id);
      for (const rec of [bobs, alices]) {
        const added = rec.ofType('MessageAttachmentAdded');
        expect(added).toHaveLength(1);
        expect(added[0]!.payload).toMatchObject({
          ...expected(message.id, id),
          conversationId: dm,
          audience: { kind: 'conversation', conversationId: dm },
        });
      }
    } finally {
      bobs.stop();
      alices.stop();
    }
  });
});
