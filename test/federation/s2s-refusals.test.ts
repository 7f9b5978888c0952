import { randomBytes, createPublicKey, sign as edSign, verify as edVerify } from 'node:crypto';

import { httpbis } from 'http-message-signatures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { contentDigest } from '../../src/federation/http-signature.js';
import { S2sClient } from '../../src/federation/s2s-client.js';
import type { Clock } from '../../src/lib/clock.js';
import { signUpAndIn } from '../_util/seed.js';

import { discoveryKey, startPeer, type Peer } from './_fed.js';

const refusals = (peer: Peer) =>
  peer.logs.lines.filter((l) => l.msg === 's2s call refused').map((l) => l.reason);

/** A's signed headers for a call to B, to send by hand (and tamper with). */
function signedCall(from: Peer, to: Peer, path: string, body: Buffer | null, clock?: Clock) {
  const client = clock
    ? new S2sClient({
        selfId: from.id,
        keys: from.ctx.keys,
        clock,
        timeoutMs: 1000,
        insecure: true,
      })
    : from.ctx.federation.client!;
  const url = `${to.url}/s2s/v1/${path}`;
  const headers = client.signedHeaders(
    body ? 'POST' : 'GET',
    url,
    body ? { 'content-type': 'application/json' } : {},
    body,
  );
  return { url, headers };
}

const send = (call: { url: string; headers: Record<string, string> }, body?: Buffer) =>
  fetch(call.url, {
    method: body ? 'POST' : 'GET',
    headers: call.headers,
    body: body ? new Uint8Array(body) : undefined,
  });

/**
 * A GET to `to` signed by `from`'s key with the independent RFC 9421 library, in this server's
 * profile but with the times given (seconds from now), to test the window from outside.
 */
async function librarySigned(
  from: Peer,
  to: Peer,
  path: string,
  o: { created?: number; expires?: number; date?: number } = {},
) {
  const now = Date.now();
  const at = (s: number | undefined, d: number) => new Date(now + (s ?? d) * 1000);
  const url = `${to.url}/s2s/v1/${path}`;
  const signed = await httpbis.signMessage(
    {
      key: {
        id: `${from.id}#${from.ctx.keys.signingPublicRaw}`,
        alg: 'ed25519',
        sign: async (data: Buffer) => edSign(null, data, from.ctx.keys.signing),
      },
      name: 'svc',
      fields: ['@method', '@target-uri', 'content-digest', 'date'],
      params: ['created', 'expires', 'nonce', 'keyid', 'alg', 'tag'],
      paramValues: {
        created: at(o.created, 0),
        expires: at(o.expires, 300),
        nonce: randomBytes(16).toString('base64url'),
        tag: 'svc-s2s-v1',
      },
    },
    {
      method: 'GET',
      url,
      headers: {
        date: at(o.date, 0).toUTCString(),
        'content-digest': contentDigest(Buffer.alloc(0)),
      },
    },
  );
  return { url, headers: signed.headers as Record<string, string> };
}

describe('/s2s/v1: signatures, replay, blocks and the peer rate', () => {
  let a: Peer;
  let b: Peer;
  beforeAll(async () => {
    a = await startPeer();
    b = await startPeer({ env: { SVC_S2S_PEER_RATE_PER_MIN: '20' } });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('answers a signed call and pins the caller on first contact', async () => {
    const res = await a.ctx.federation.client!.call(b.id, { method: 'GET', path: 'ping' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({ server: b.id, peer: a.id });
    const pin = await b.ctx.db.kysely
      .selectFrom('s2s_peer')
      .selectAll()
      .where('serverId', '=', a.id)
      .executeTakeFirstOrThrow();
    expect(pin.currentKey).toBe(await discoveryKey(a));
  });

  it('refuses an unsigned call with a generic 401, logging the reason', async () => {
    const res = await fetch(`${b.url}/s2s/v1/ping`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'the request signature was not accepted' });
    expect(refusals(b)).toContain('unsigned');
  });

  it('refuses a bad signature, an altered body and an altered header', async () => {
    const body = Buffer.from('{"user":"x","devices":[]}');
    const bad = signedCall(a, b, 'revocations', body);
    const sig = bad.headers.signature!;
    bad.headers.signature = sig.replace(/:(.)/, (_m, ch: string) => `:${ch === 'A' ? 'B' : 'A'}`);
    expect((await send(bad, body)).status).toBe(401);
    expect(refusals(b)).toContain('bad_signature');

    const altered = signedCall(a, b, 'revocations', body);
    expect((await send(altered, Buffer.from('{"user":"y","devices":[]}'))).status).toBe(401);
    expect(refusals(b)).toContain('bad_digest');

    const header = signedCall(a, b, 'revocations', body);
    header.headers['content-type'] = 'text/plain';
    expect((await send(header, body)).status).toBe(401);
    expect(refusals(b).filter((r) => r === 'bad_signature')).toHaveLength(2);
  });

  it('accepts a call signed by the independent library in this profile', async () => {
    const res = await send(await librarySigned(a, b, 'ping'));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ server: b.id, peer: a.id });
  });

  it('refuses a call created in the future, past its expires, or dated off the window', async () => {
    const before = refusals(b).filter((r) => r === 'stale').length;
    for (const times of [
      { created: 400, expires: 700 },
      { created: -100, expires: -10 },
      { date: -400 },
    ]) {
      expect(
        (await send(await librarySigned(a, b, 'ping', times))).status,
        JSON.stringify(times),
      ).toBe(401);
    }
    expect(refusals(b).filter((r) => r === 'stale').length - before).toBe(3);
  });

  it('refuses a stale signature and a replayed one', async () => {
    const past: Clock = { now: () => new Date(Date.now() - 10 * 60_000) };
    const stale = signedCall(a, b, 'ping', null, past);
    expect((await send(stale)).status).toBe(401);
    expect(refusals(b)).toContain('stale');

    const once = signedCall(a, b, 'ping', null);
    expect((await send(once)).status).toBe(200);
    expect((await send(once)).status).toBe(401);
    expect(refusals(b)).toContain('replayed');
  });

  it("signs what http-message-signatures verifies with the key of A's discovery document", async () => {
    const call = signedCall(a, b, 'ping', null);
    const key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: await discoveryKey(a) },
      format: 'jwk',
    });
    const ok = await httpbis.verifyMessage(
      {
        keyLookup: async () => ({
          id: 'a',
          algs: ['ed25519'],
          verify: async (data: Buffer, sig: Buffer) => edVerify(null, data, key, sig),
        }),
        requiredFields: ['@method', '@target-uri', 'content-digest', 'date'],
      },
      { method: 'GET', url: call.url, headers: call.headers },
    );
    expect(ok).toBe(true);
  });

  it('refuses a peer blocked with a `server:` principal block, until it is unblocked', async () => {
    const op = await signUpAndIn(b.t, { operator: true });
    const block = await b.t.gql(
      'mutation($p: String!) { instanceBlockPrincipal(principalId: $p) { block { principalId } } }',
      { p: `server:${a.id}` },
      op,
    );
    expect(block.body.errors).toBeUndefined();
    const res = await a.ctx.federation.client!.call(b.id, { method: 'GET', path: 'ping' });
    expect(res.status).toBe(403);
    expect(refusals(b)).toContain('blocked');
    const unblock = await b.t.gql(
      'mutation($p: String!) { instanceUnblockPrincipal(principalId: $p) { principalId } }',
      { p: `server:${a.id}` },
      op,
    );
    expect(unblock.body.errors).toBeUndefined();
    expect(
      (await a.ctx.federation.client!.call(b.id, { method: 'GET', path: 'ping' })).status,
    ).toBe(200);
  });

  it("calls that only name a peer do not use up that peer's SVC_S2S_PEER_RATE_PER_MIN", async () => {
    // More forged calls claiming to be A than A may make in a minute.
    for (let i = 0; i < 25; i++) {
      const forged = signedCall(a, b, 'ping', null);
      forged.headers.signature = forged.headers.signature!.replace(
        /:(.)/,
        (_m, ch: string) => `:${ch === 'A' ? 'B' : 'A'}`,
      );
      expect((await send(forged)).status).toBe(401);
    }
    expect(refusals(b)).not.toContain('rate_limited');
    const real = await a.ctx.federation.client!.call(b.id, { method: 'GET', path: 'ping' });
    expect(real.status).toBe(200);
  });

  it('limits each peer to SVC_S2S_PEER_RATE_PER_MIN, with Retry-After', async () => {
    let last = 200;
    let retryAfter: string | string[] | undefined;
    for (let i = 0; i < 25 && last !== 429; i++) {
      const res = await a.ctx.federation.client!.call(b.id, { method: 'GET', path: 'ping' });
      last = res.status;
      retryAfter = res.headers['retry-after'];
    }
    expect(last).toBe(429);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(refusals(b)).toContain('rate_limited');
    b.ctx.federation.verifier['deps'].limiter?.reset();
  });

  it('follows a signed key rotation of a pinned peer', async () => {
    const before = await discoveryKey(a);
    const rotated = await a.ctx.federation.keyLog.rotate();
    expect(rotated.previousKey).toBe(before);
    expect(await discoveryKey(a)).toBe(rotated.key);
    const res = await a.ctx.federation.client!.call(b.id, { method: 'GET', path: 'ping' });
    expect(res.status).toBe(200);
    const pin = await b.ctx.db.kysely
      .selectFrom('s2s_peer')
      .select(['currentKey', 'keyLog'])
      .where('serverId', '=', a.id)
      .executeTakeFirstOrThrow();
    expect(pin.currentKey).toBe(rotated.key);
    expect(JSON.parse(pin.keyLog)).toHaveLength(2);
    expect(b.logs.find('peer key rotation followed')).toBeTruthy();
  });

  it('refuses a server that comes back at the same address with another key (a fork)', async () => {
    const port = Number(new URL(a.url).port);
    await a.stop();
    const impostor = await startPeer({ port });
    try {
      expect(impostor.id).toBe(a.id);
      const res = await impostor.ctx.federation.client!.call(b.id, { method: 'GET', path: 'ping' });
      expect(res.status).toBe(401);
      expect(
        b.logs.find('peer key log does not extend the pinned one (fork); keeping the pin'),
      ).toBeTruthy();
    } finally {
      await impostor.stop();
    }
  });
});
