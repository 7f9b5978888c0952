import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { signUpAndIn } from '../_util/seed.js';
import { newKey, signText, type KeyAccount } from '../devices/_keys.js';
import { Collected, modernClient, until } from '../realtime/_helpers.js';

import {
  checkHostResponse,
  CREATE_INVITE,
  CREATE_WORKSPACE,
  discoveryKey,
  freePort,
  hostKeyViaRelay,
  JOIN,
  keyUser,
  linkDevice,
  READ,
  SEND,
  viaRelayRaw,
  startPeer,
  viaRelay,
  type Peer,
} from './_fed.js';

// docs/federation.md's example: relay A, host B, relay C, each a real server on its own port and
// database. A person of A and a person of C join a workspace on B through their relays and talk.
describe('federation: relay A, host B, relay C', () => {
  let a: Peer;
  let b: Peer;
  let c: Peer;
  let alice: KeyAccount;
  let carol: KeyAccount;
  let token: string;
  let workspaceId: string;
  let channelId: string;

  beforeAll(async () => {
    // One after the other: migrating three PostgreSQL schemas at once on a busy machine is slow.
    a = await startPeer();
    b = await startPeer({ env: { SVC_ROLE: 'host' } });
    c = await startPeer();
    alice = await keyUser(a, 'alice');
    carol = await keyUser(c, 'carol');
    const bob = await signUpAndIn(b.t, { username: 'bob' });
    const ws = await b.t.gql(CREATE_WORKSPACE, { name: 'Shared place' }, bob);
    expect(ws.body.errors).toBeUndefined();
    workspaceId = ws.body.data!.createWorkspace.id;
    channelId = ws.body.data!.createWorkspace.channels[0].id;
    const inv = await b.t.gql(CREATE_INVITE, { id: workspaceId }, bob);
    expect(inv.body.errors).toBeUndefined();
    token = inv.body.data!.createWorkspaceInvite.token;
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), c?.stop()]);
  });

  it('a person of A joins the workspace on B with an invite, through A', async () => {
    const res = await viaRelay(a, alice, b.id, JOIN, { token });
    expect(res.status).toBe(200);
    expect(res.json().errors).toBeUndefined();
    expect(res.json().data.joinWorkspace.id).toBe(workspaceId);
    // The answer is the host's, signed by B for this very request; the client learns B's key
    // from B's discovery document, fetched through its relay and checked link by link.
    const hostKey = await hostKeyViaRelay(a, alice, b.id);
    expect(hostKey).toBe(await discoveryKey(b));
    checkHostResponse(res, { host: b.id, hostKey });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('a person of C joins too, and the two talk; each appears with their home server', async () => {
    expect((await viaRelay(c, carol, b.id, JOIN, { token })).json().errors).toBeUndefined();
    const sent = await viaRelay(a, alice, b.id, SEND, { c: channelId, text: 'hello from A' });
    expect(sent.json().errors).toBeUndefined();
    expect(sent.json().data.sendMessage.author).toEqual({
      username: `alice@${a.id}`,
      homeServer: a.id,
    });
    const reply = await viaRelay(c, carol, b.id, SEND, { c: channelId, text: 'hello from C' });
    expect(reply.json().errors).toBeUndefined();
    const read = await viaRelay(c, carol, b.id, READ, { c: channelId });
    const items = read.json().data.messages.items as Array<{ text: string; author: unknown }>;
    expect(items.map((m) => m.text)).toEqual(['hello from A', 'hello from C']);
    expect(items[1]!.author).toEqual({ username: `carol@${c.id}`, homeServer: c.id });
    checkHostResponse(read, { host: b.id, hostKey: await discoveryKey(b) });
  });

  it('a file uploaded through one relay downloads through another (forwarded attachment routes)', async () => {
    const sent = await viaRelay(a, alice, b.id, SEND, { c: channelId, text: 'see the notes' });
    const messageId = sent.json().data.sendMessage.id as string;
    const created = await viaRelay(
      a,
      alice,
      b.id,
      `mutation($c: ID!) { createAttachment(input: { conversationId: $c, fileName: "notes.txt" }) { attachmentId uploadToken } }`,
      { c: channelId },
    );
    expect(created.json().errors).toBeUndefined();
    const att = created.json().data.createAttachment as {
      attachmentId: string;
      uploadToken: string;
    };
    const boundary = 'fedboundary42';
    const file = Buffer.from('federated notes\n');
    const form = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="upload_token"\r\n\r\n${att.uploadToken}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="attachment_id"\r\n\r\n${att.attachmentId}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\n`,
      ),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const upload = await viaRelayRaw(a, alice, b.id, {
      method: 'POST',
      path: '/api/files/upload',
      body: form,
      contentType: `multipart/form-data; boundary=${boundary}`,
    });
    expect(upload.status, upload.text).toBe(200);
    const fin = await viaRelay(
      a,
      alice,
      b.id,
      `mutation($a: ID!, $m: ID!) { finalizeAttachment(input: { attachmentId: $a, messageId: $m }) { id } }`,
      { a: att.attachmentId, m: messageId },
    );
    expect(fin.json().errors).toBeUndefined();

    const download = await viaRelayRaw(c, carol, b.id, {
      method: 'GET',
      path: `/api/attachments/${att.attachmentId}/download`,
    });
    expect(download.status).toBe(200);
    expect(download.bytes.equals(file)).toBe(true);
    expect(download.headers.get('content-type')).toMatch(/^text\/plain/);
    checkHostResponse(download, { host: b.id, hostKey: await discoveryKey(b) });
  });

  it("a remote person's account mutations answer FORBIDDEN on the host", async () => {
    const res = await viaRelay(
      a,
      alice,
      b.id,
      'mutation { requestAccountDeletion(input: { confirmUsername: "alice" }) { scheduledFor } }',
    );
    expect(res.status).toBe(200);
    expect(res.json().errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it("B's host refuses to be a relay, and A refuses to relay to itself", async () => {
    const bobKey = await keyUser(b);
    const res = await viaRelay(b, bobKey, a.id, '{ me { id } }');
    expect(res.status).toBe(403);
    expect(res.json()).toEqual({
      error: 'forbidden',
      message: expect.stringContaining('SVC_ROLE'),
    });
    const self = await viaRelay(a, alice, a.id, '{ me { id } }');
    expect(self.status).toBe(400);
    expect(self.json().error).toBe('validation');
  });

  it('the relay checks the session and the CSRF header', async () => {
    const anon = await fetch(`${a.url}/api/remote/${b.id}/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(anon.status).toBe(401);
    expect(await anon.json()).toEqual({ error: 'unauthenticated', message: 'sign in first' });
    const noCsrf = await viaRelay(a, alice, b.id, '{ me { id } }', {}, { csrf: false });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.json()).toEqual({ error: 'forbidden', message: 'csrf validation failed' });
  });

  it('events on B reach the person of A through relayStream on A, naming the host', async () => {
    const client = modernClient(`ws://127.0.0.1:${a.address.port}/api/ws`, alice.agent);
    try {
      const sub = new Collected(
        client,
        'subscription { relayStream { type serverId hostServerId conversationId payload } }',
      );
      // The subscription is live once the server counts it.
      await until(
        async () => ((await a.ctx.metrics.wsSubscriptions.get()).values[0]?.value ?? 0) >= 1,
        'the subscription on A',
      );
      const sent = await viaRelay(c, carol, b.id, SEND, { c: channelId, text: 'are you there?' });
      expect(sent.json().errors).toBeUndefined();
      await until(
        () => sub.events('relayStream').some((e) => e.type === 'MessageCreated'),
        'MessageCreated through relayStream',
      );
      const event = sub.events('relayStream').find((e) => e.type === 'MessageCreated')!;
      expect(event).toMatchObject({
        serverId: workspaceId,
        hostServerId: b.id,
        conversationId: channelId,
      });
      expect(JSON.stringify(event.payload)).toContain('are you there?');
      sub.unsubscribe();
    } finally {
      await client.dispose();
    }
  });

  it('a person of A named as `@alice@<A>` on B is told of it there, and no one else', async () => {
    const text = `@alice@${a.id}. look at this, not @alice@elsewhere.example`;
    const sent = await viaRelay(c, carol, b.id, SEND, { c: channelId, text });
    expect(sent.json().errors).toBeUndefined();
    const shadow = await b.ctx.db.kysely
      .selectFrom('account')
      .select('id')
      .where('usernameKey', '=', `alice@${a.id}`)
      .executeTakeFirstOrThrow();
    const read = await viaRelay(
      a,
      alice,
      b.id,
      `query($c: ID!) { messages(conversationId: $c, limit: 1) { items { text mentions { userIds } } } }`,
      { c: channelId },
    );
    expect(read.json().data.messages.items[0]).toEqual({
      text,
      mentions: { userIds: [shadow.id] },
    });
    const told = await viaRelay(
      a,
      alice,
      b.id,
      `{ notifications(unreadOnly: true, limit: 5) { items { kind message { text } } } }`,
    );
    expect(told.json().errors).toBeUndefined();
    expect(told.json().data.notifications.items).toContainEqual({
      kind: 'MENTION',
      message: { text },
    });
  });

  it("a device A revokes is refused on B (applyRemoteRevocation through A's outbox)", async () => {
    const phone = await linkDevice(a, alice);
    const viaPhone = await viaRelay(a, phone, b.id, READ, { c: channelId });
    expect(viaPhone.status).toBe(200);
    const shadow = await b.ctx.db.kysely
      .selectFrom('account')
      .select('id')
      .where('usernameKey', '=', `alice@${a.id}`)
      .executeTakeFirstOrThrow();
    const deviceRow = () =>
      b.ctx.db.kysely
        .selectFrom('remote_device')
        .selectAll()
        .where('accountId', '=', shadow.id)
        .where('deviceKey', '=', phone.device.publicKey)
        .executeTakeFirstOrThrow();
    expect((await deviceRow()).revokedAt).toBeNull();

    const revoked = await a.t.gql(
      'mutation($id: ID!) { revokeDevice(deviceId: $id) }',
      { id: phone.deviceId },
      alice.agent,
    );
    expect(revoked.body.errors).toBeUndefined();
    await until(async () => (await deviceRow()).revokedAt !== null, 'the revocation on B');
    // The log line follows the commit's flush to the disk, a moment after the row is readable.
    await until(async () => !!b.logs.find('remote revocation applied'), 'the log line');
    expect(b.logs.find('remote revocation applied')).toMatchObject({ relay: a.id, revoked: 1 });
    // A delivered it and forgot it.
    await until(
      async () =>
        (await a.ctx.db.kysely.selectFrom('s2s_outbox').selectAll().execute()).length === 0,
      'the outbox to empty',
    );
    // The laptop still works.
    const still = await viaRelay(a, alice, b.id, READ, { c: channelId });
    expect(still.status).toBe(200);
    expect(still.json().errors).toBeUndefined();
  });

  it('applyRemoteRevocation takes a statement A signed, from anyone, without a session', async () => {
    const APPLY = `mutation($s: String!, $sig: String!) {
      applyRemoteRevocation(statement: $s, signature: $sig) { revokedDevices sessionsEnded }
    }`;
    const forB = a.ctx.federation.revocations.revocationStatement(b.id, 'alice', null, Date.now());
    const forC = a.ctx.federation.revocations.revocationStatement(c.id, 'alice', null, Date.now());
    const tampered = await b.t.gql(APPLY, { s: forB.statement, sig: forC.signature });
    expect(tampered.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const elsewhere = await b.t.gql(APPLY, { s: forC.statement, sig: forC.signature });
    expect(elsewhere.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

    const res = await b.t.gql(APPLY, { s: forB.statement, sig: forB.signature });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data!.applyRemoteRevocation.revokedDevices).toBe(1);
    // Every device of alice is refused on B now; B says so in a signed answer.
    const after = await viaRelay(a, alice, b.id, READ, { c: channelId });
    expect(after.status).toBe(401);
    checkHostResponse(after, { host: b.id, hostKey: await discoveryKey(b) });
    // Applying it again changes nothing.
    const again = await b.t.gql(APPLY, { s: forB.statement, sig: forB.signature });
    expect(again.body.data!.applyRemoteRevocation.revokedDevices).toBe(0);
  });

  it("B's operator blocks one person of C (`remote:`): B refuses them, signed; others pass", async () => {
    const op = await signUpAndIn(b.t, { operator: true });
    const p = `remote:carol@${c.id}`;
    const shadow = await b.ctx.db.kysely
      .selectFrom('account')
      .select('id')
      .where('usernameKey', '=', `carol@${c.id}`)
      .executeTakeFirstOrThrow();
    expect(b.ctx.federation.bridge!.isOpen(shadow.id)).toBe(true);
    const blocked = await b.t.gql(
      'mutation($p: String!) { instanceBlockPrincipal(principalId: $p) { block { principalId kind } } }',
      { p },
      op,
    );
    expect(blocked.body.errors).toBeUndefined();
    // Her live events stop at once, and her requests are refused in a signed answer.
    expect(b.ctx.federation.bridge!.isOpen(shadow.id)).toBe(false);
    const res = await viaRelay(c, carol, b.id, READ, { c: channelId });
    expect(res.status).toBe(403);
    checkHostResponse(res, { host: b.id, hostKey: await discoveryKey(b) });
    const unblocked = await b.t.gql(
      'mutation($p: String!) { instanceUnblockPrincipal(principalId: $p) { principalId } }',
      { p },
      op,
    );
    expect(unblocked.body.errors).toBeUndefined();
    expect((await viaRelay(c, carol, b.id, READ, { c: channelId })).status).toBe(200);
  });

  it('applyRemoteRevocation answers UPSTREAM_UNAVAILABLE when the relay cannot be reached', async () => {
    const relay = `127.0.0.1:${await freePort()}`;
    const statement = Buffer.from(
      JSON.stringify({
        type: 'svc.remote-revocation.v1',
        relay,
        host: b.id,
        user: 'someone',
        devices: null,
        issuedAt: new Date().toISOString(),
      }),
    ).toString('base64url');
    const res = await b.t.gql(
      'mutation($s: String!) { applyRemoteRevocation(statement: $s, signature: "AAAA") { revokedDevices } }',
      { s: statement },
    );
    expect(res.body.errors?.[0]?.extensions).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      hostServerId: relay,
      origin: `http://${relay}`,
    });
  });

  it('applyRemoteRevocation refuses a statement signed by a key A never had (UNAUTHENTICATED)', async () => {
    const forger = newKey();
    const forged = () => {
      const value = Buffer.from(
        JSON.stringify({
          type: 'svc.remote-revocation.v1',
          relay: a.id,
          host: b.id,
          user: 'alice',
          devices: null,
          issuedAt: new Date().toISOString(),
          key: forger.publicKey,
        }),
      ).toString('base64url');
      return { s: value, sig: signText(forger, value) };
    };
    const APPLY = `mutation($s: String!, $sig: String!) {
      applyRemoteRevocation(statement: $s, signature: $sig) { revokedDevices }
    }`;
    // Once after B read A's key log, and again while B remembers that read (no second fetch).
    for (let i = 0; i < 2; i++) {
      const res = await b.t.gql(APPLY, forged());
      expect(res.body.data).toBeNull();
      expect(res.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    const refusal = b.logs.lines.filter((l) => l.msg === 'remote revocation refused').at(-1);
    expect(String(refusal?.why)).toMatch(/current key/);
  });

  it("a person A's operator blocks loses every device at B too", async () => {
    const dave = await keyUser(a, 'dave');
    expect((await viaRelay(a, dave, b.id, JOIN, { token })).json().errors).toBeUndefined();
    const live = async () =>
      b.ctx.db.kysely
        .selectFrom('remote_device')
        .innerJoin('account', 'account.id', 'remote_device.accountId')
        .select('remote_device.deviceKey')
        .where('account.usernameKey', '=', `dave@${a.id}`)
        .where('remote_device.revokedAt', 'is', null)
        .execute();
    expect(await live()).toHaveLength(1);
    const op = await signUpAndIn(a.t, { operator: true });
    const blocked = await a.t.gql(
      'mutation { instanceBlockPrincipal(principalId: "@dave") { block { principalId } } }',
      {},
      op,
    );
    expect(blocked.body.errors).toBeUndefined();
    await until(async () => (await live()).length === 0, "dave's devices revoked on B");
    await until(
      async () =>
        b.logs.lines.some((l) => l.msg === 'remote revocation applied' && l.user === 'dave'),
      'the log line',
    );
  });

  it('a person purged at A loses every device at B', async () => {
    const erin = await keyUser(a, 'erin');
    expect((await viaRelay(a, erin, b.id, JOIN, { token })).json().errors).toBeUndefined();
    const asked = await a.t.gql(
      'mutation { requestAccountDeletion(input: { confirmUsername: "erin" }) { scheduledFor } }',
      {},
      erin.agent,
    );
    expect(asked.body.errors).toBeUndefined();
    expect(
      await a.ctx.services.accountDeletion.purgeDue(Date.now(), { ignoreGrace: true }),
    ).toHaveLength(1);
    await until(
      () => b.logs.lines.some((l) => l.msg === 'remote revocation applied' && l.user === 'erin'),
      "erin's revocation on B",
    );
    const live = await b.ctx.db.kysely
      .selectFrom('remote_device')
      .innerJoin('account', 'account.id', 'remote_device.accountId')
      .select('remote_device.deviceKey')
      .where('account.usernameKey', '=', `erin@${a.id}`)
      .where('remote_device.revokedAt', 'is', null)
      .execute();
    expect(live).toEqual([]);
  });

  it("B blocked by A's operator: A relays nothing to B, and B's calls to A are refused", async () => {
    const op = await signUpAndIn(a.t, { operator: true });
    const blocked = await a.t.gql(
      'mutation($p: String!) { instanceBlockPrincipal(principalId: $p, reason: "spam") { block { principalId } } }',
      { p: `server:${b.id}` },
      op,
    );
    expect(blocked.body.errors).toBeUndefined();
    const res = await viaRelay(a, alice, b.id, READ, { c: channelId });
    expect(res.status).toBe(403);
    expect(res.json().error).toBe('blocked');
    const ping = await b.ctx.federation.client!.call(a.id, { method: 'GET', path: 'ping' });
    expect(ping.status).toBe(403);
    // C is unaffected.
    expect((await viaRelay(c, carol, b.id, READ, { c: channelId })).status).toBe(200);
  });
});
