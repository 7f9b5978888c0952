import { createECDH, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { encodeStatement, RELAY_VOUCH } from '../../src/federation/device-request.js';
import { RELAYED_ADDRESS } from '../../src/http/admission.js';
import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { startSmtp } from '../_util/smtp.js';
import { challenge, newKey, nowIso, signText, signUpWithKey, statement } from '../devices/_keys.js';
import { deviceHeaders } from '../federation/_fed.js';
import { multipart } from '../files/_image-upload.js';

// Issue 48, item 4: no token, password, session id, invite code, push endpoint secret, signature
// or message text in any log line at info or above. The flows that handle secrets run, with their
// failures (a wrong password, a spent token, a forged signature), through the server's own
// logger (src/logger.ts: its level and redaction); then every captured line is searched for
// every secret the test created or was given.

const OK = (res: { body: { errors?: unknown; data?: any } }, what: string) => {
  expect(res.body.errors, `${what}: ${JSON.stringify(res.body.errors)}`).toBeUndefined();
  return res.body.data;
};

describe('secrets in the log', () => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let push: http.Server;
  let pushBase: string;
  const secrets = new Map<string, string>();
  const keep = (what: string, value: string | undefined | null) => {
    if (!value || value.length < 8) throw new Error(`no secret for ${what}`);
    secrets.set(value, what);
  };
  const keepAgent = (who: string, a: Agent) => {
    keep(`${who}'s session`, a.cookies.svc_session);
    keep(`${who}'s CSRF token`, a.csrfToken);
  };

  beforeAll(async () => {
    smtp = await startSmtp();
    // A push service that refuses every push (500), so the refusal path logs too.
    push = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(500).end());
    });
    await new Promise<void>((r) => push.listen(0, '127.0.0.1', r));
    pushBase = `http://127.0.0.1:${(push.address() as AddressInfo).port}`;
    t = await createTestApp({
      serverLogger: true,
      env: {
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_PORT: String(smtp.port),
        SVC_SMTP_FROM: 'svc@example.org',
        SVC_PUBLIC_BASE_URL: 'http://127.0.0.1:1',
        SVC_SIGNUP_REQUIRE_KEYS: 'false',
        SVC_OPEN_REGISTRATION: 'true',
        SVC_PUSH_ALLOW_PRIVATE_ENDPOINTS: 'true',
        SVC_PUSH_CONTACT: 'mailto:ops@example.org',
      },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
    await new Promise((r) => push?.close(r));
  });

  it('holds none of the secrets the flows handled, at any level the server logs', async () => {
    // Sign-in: a good password, a wrong one, and one pasted into a document that does not parse.
    const password = `pw-${randomBytes(9).toString('base64url')}`;
    keep('password', password);
    const owner = await signUpAndIn(t, { password, email: 'owner@example.org' });
    keepAgent('owner', owner);
    const wrong = `wrong-${randomBytes(9).toString('base64url')}`;
    keep('wrong password', wrong);
    const LOGIN =
      'mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken } }';
    await t.gql(LOGIN, { u: owner.username, p: wrong });
    await t.gql(
      `mutation { login(input: { username: "${owner.username}", password: "${wrong}" }) `,
    );
    const operator = await signUpAndIn(t, { operator: true });
    keepAgent('operator', operator);

    // Password reset: the mailed token, used once, then again (spent).
    OK(
      await t.gql(
        'mutation($l: String!) { requestPasswordReset(input: { emailOrUsername: $l }) }',
        { l: owner.username },
      ),
      'requestPasswordReset',
    );
    for (let i = 0; i < 100 && smtp.messages.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const resetToken = /Reset token: ([A-Za-z0-9_-]{43})/.exec(smtp.messages[0]?.raw ?? '')?.[1];
    keep('reset token', resetToken);
    const newPassword = `new-${randomBytes(9).toString('base64url')}`;
    keep('new password', newPassword);
    const RESET =
      'mutation($t: String!, $p: String!) { resetPassword(input: { token: $t, newPassword: $p }) }';
    OK(await t.gql(RESET, { t: resetToken, p: newPassword }), 'resetPassword');
    await t.gql(RESET, { t: resetToken, p: newPassword });
    const signedIn = await t.gql(LOGIN, { u: owner.username, p: newPassword });
    const cookies = signedIn.response.cookies as Array<{ name: string; value: string }>;
    const me: Agent = {
      ...owner,
      cookies: Object.fromEntries(cookies.map((c) => [c.name, c.value])),
      csrfToken: signedIn.body.data!.login.csrfToken,
    };
    keepAgent('owner again', me);

    // Invites: a workspace invite used and then spent; an instance invite for a signup.
    const ws = OK(
      await t.gql(
        'mutation { createWorkspace(input: { name: "Logs" }) { id channels { id name } } }',
        {},
        me,
      ),
      'createWorkspace',
    ).createWorkspace;
    const general = ws.channels.find((c: { name: string }) => c.name === 'general').id as string;
    const invite = OK(
      await t.gql(
        'mutation($s: ID!) { createWorkspaceInvite(input: { serverId: $s, maxUses: 1, email: "m@example.org" }) { token } }',
        { s: ws.id },
        me,
      ),
      'createWorkspaceInvite',
    ).createWorkspaceInvite.token as string;
    keep('workspace invite', invite);
    const member = await signUpAndIn(t);
    keepAgent('member', member);
    const JOIN = 'mutation($t: String!) { joinWorkspace(token: $t) { id } }';
    OK(await t.gql(JOIN, { t: invite }, member), 'joinWorkspace');
    await t.gql(JOIN, { t: invite }, operator);
    const instanceInvite = OK(
      await t.gql('mutation { createInstanceInvite(maxUses: 1) { token } }', {}, operator),
      'createInstanceInvite',
    ).createInstanceInvite.token as string;
    keep('instance invite', instanceInvite);
    const invitedPassword = `inv-${randomBytes(9).toString('base64url')}`;
    keep('invited password', invitedPassword);
    const SIGNUP =
      'mutation($i: SignupWithInviteInput!) { signupWithInvite(input: $i) { csrfToken } }';
    OK(
      await t.gql(SIGNUP, {
        i: { username: 'invited1', password: invitedPassword, inviteToken: instanceInvite },
      }),
      'signupWithInvite',
    );
    await t.gql(SIGNUP, {
      i: { username: 'invited2', password: invitedPassword, inviteToken: instanceInvite },
    });

    // Messages: text sent, edited, and one too long to take.
    const text = `the launch code is ${randomBytes(9).toString('base64url')}`;
    keep('message text', text);
    const SEND = 'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }';
    const sent = OK(
      await t.gql(
        SEND,
        { i: { conversationId: general, text: `${text} @${me.username}` } },
        member,
      ),
      'sendMessage',
    ).sendMessage.id as string;
    const edited = `edited ${randomBytes(9).toString('base64url')}`;
    keep('edited text', edited);
    await t.gql(
      'mutation($m: ID!, $x: String!) { editMessage(messageId: $m, text: $x) { id } }',
      { m: sent, x: edited },
      member,
    );
    await t.gql(
      SEND,
      { i: { conversationId: general, text: `${text}${'x'.repeat(70_000)}` } },
      member,
    );

    // Uploads: the token of createAttachment, used once and then forged.
    const created = OK(
      await t.gql(
        'mutation($c: ID!) { createAttachment(input: { conversationId: $c, fileName: "a.txt", contentType: "text/plain" }) { attachmentId uploadToken } }',
        { c: general },
        member,
      ),
      'createAttachment',
    ).createAttachment as { attachmentId: string; uploadToken: string };
    keep('upload token', created.uploadToken);
    for (const token of [created.uploadToken, created.uploadToken, `${created.uploadToken}x`]) {
      const form = multipart([
        { name: 'upload_token', value: token },
        { name: 'attachment_id', value: created.attachmentId },
        { name: 'file', bytes: Buffer.from('hello\n'), filename: 'a.txt', type: 'text/plain' },
      ]);
      await t.inject({
        method: 'POST',
        url: '/api/files/upload',
        headers: { 'content-type': form.contentType, ...agentHeaders(member) },
        payload: form.body,
      });
    }

    // Push: a subscription whose endpoint path, p256dh and auth are secrets; a mention pushes to
    // it (the owner has no open connection) and the push service refuses.
    const endpointSecret = randomBytes(16).toString('base64url');
    keep('push endpoint', endpointSecret);
    const browser = createECDH('prime256v1');
    const p256dh = browser.generateKeys().toString('base64url');
    const auth = randomBytes(16).toString('base64url');
    keep('push p256dh', p256dh);
    keep('push auth', auth);
    OK(
      await t.gql(
        'mutation($i: PushSubscriptionInput!) { registerPushSubscription(input: $i) }',
        { i: { endpoint: `${pushBase}/push/${endpointSecret}`, p256dh, auth } },
        me,
      ),
      'registerPushSubscription',
    );
    await t.gql(
      SEND,
      { i: { conversationId: general, text: `${text} again @${me.username}` } },
      member,
    );

    // A device link to a key account: the offer's secret and code.
    const keyed = await signUpWithKey(t);
    keepAgent('key account', keyed.agent);
    const device = newKey();
    const ch = await challenge(t);
    const issuedAt = nowIso(t);
    const offer = OK(
      await t.gql(
        'mutation($i: SendDeviceLinkOfferInput!) { sendDeviceLinkOffer(input: $i) { offerId offerSecret code } }',
        {
          i: {
            username: keyed.username,
            devicePublicKey: device.publicKey,
            deviceName: 'Tablet',
            challengeId: ch.challengeId,
            issuedAt,
            signature: signText(
              device,
              statement('device-link', ch, issuedAt, [
                ['username', keyed.username],
                ['device', device.publicKey],
              ]),
            ),
          },
        },
      ),
      'sendDeviceLinkOffer',
    ).sendDeviceLinkOffer as { offerId: string; offerSecret: string; code: string };
    keep('device link secret', offer.offerSecret);
    keep('device link code', offer.code);
    await t.gql(
      'mutation($i: ApproveDeviceLinkInput!) { approveDeviceLink(input: $i) { id } }',
      { i: { offerId: offer.offerId, code: 'WRON-GCOD' } },
      keyed.agent,
    );

    // Federation: a relayed device request, well signed and then forged; an /s2s call with a
    // made-up signature.
    const selfId = t.ctx.federation.service.selfId!;
    const body = Buffer.from(JSON.stringify({ query: '{ me { id } }' }));
    const signed = deviceHeaders(device, { host: selfId, method: 'POST', path: '/api', body });
    keep('device request signature', signed['svc-device-signature']);
    const forged = randomBytes(64).toString('base64url');
    keep('forged device signature', forged);
    for (const signature of [signed['svc-device-signature'], forged]) {
      await t.ctx.federation.service.host(
        {
          peer: { serverId: '127.0.0.1:9', key: 'verified' },
          method: 'POST',
          tail: '/api',
          headers: {
            'svc-device-request': signed['svc-device-request'],
            'svc-device-signature': signature,
            [RELAY_VOUCH]: encodeStatement({
              user: 'rita',
              device: device.publicKey,
              displayName: null,
            }),
            'content-type': 'application/json',
          },
          body,
        },
        async (r) => {
          const res = await t.app.inject({
            remoteAddress: RELAYED_ADDRESS,
            method: r.method,
            url: r.url,
            headers: r.headers,
            payload: r.body,
          });
          return { status: res.statusCode, headers: res.headers, body: res.rawPayload };
        },
      );
    }
    const s2sSignature = randomBytes(64).toString('base64');
    keep('s2s signature', s2sSignature);
    await t.inject({
      method: 'GET',
      url: '/s2s/v1/ping',
      headers: {
        'signature-input': `sig1=("@method" "@path");created=${Math.floor(Date.now() / 1000)};keyid="127.0.0.1:9";alg="ed25519"`,
        signature: `sig1=:${s2sSignature}:`,
      },
    });

    // Sessions end: logout and the sign-out of the others.
    await t.gql('mutation { logoutOtherSessions }', {}, me);
    await t.gql('mutation { logout }', {}, member);

    await t.ctx.services.notifications.settled();
    await t.ctx.services.webPush.settled();
    const lines = t.logs.lines;
    expect(lines.length).toBeGreaterThan(20);
    // The failure paths ran (and logged): the push refused, the forged requests refused.
    const messages = lines.map((l) => l.msg);
    for (const msg of [
      'push service refused a push',
      'host: forwarded request refused',
      's2s call refused',
      'mail sent',
    ]) {
      expect(messages).toContain(msg);
    }
    const found: string[] = [];
    for (const line of lines) {
      const text = JSON.stringify(line);
      for (const [secret, what] of secrets) {
        if (text.includes(secret))
          found.push(`${what} in "${String(line.msg)}": ${text.slice(0, 300)}`);
      }
    }
    expect(found).toEqual([]);
  }, 60_000);
});
