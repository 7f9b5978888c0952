import { createPrivateKey, createPublicKey, sign as edSign, verify as edVerify } from 'node:crypto';

import { httpbis } from 'http-message-signatures';
import { describe, expect, it } from 'vitest';

import {
  contentDigest,
  parseSignatureField,
  parseSignatureInputField,
  signatureBase,
  signMessage,
  verifySignature,
  type HttpMessage,
} from '../../src/federation/http-signature.js';
import { S2sClient } from '../../src/federation/s2s-client.js';
import { systemClock } from '../../src/lib/clock.js';
import type { ServerKeys } from '../../src/services/instance/server-keys.js';
import { rawEd25519Public } from '../../src/services/instance/server-keys.js';

// RFC 9421, appendix B.1.4: the Ed25519 test key; appendix B.2.6: the signature over it.
const RFC_PRIVATE = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
-----END PRIVATE KEY-----`;
const RFC_PUBLIC = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=
-----END PUBLIC KEY-----`;
// Appendix B.2 "test-request".
const RFC_REQUEST: HttpMessage = {
  method: 'POST',
  url: 'https://example.com/foo?param=Value&Pet=dog',
  headers: {
    host: 'example.com',
    date: 'Tue, 20 Apr 2021 02:07:55 GMT',
    'content-type': 'application/json',
    'content-digest':
      'sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:',
    'content-length': '18',
  },
};
const B26_INPUT =
  'sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"';
const B26_SIGNATURE =
  'sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:';
const B26_BASE = [
  '"date": Tue, 20 Apr 2021 02:07:55 GMT',
  '"@method": POST',
  '"@path": /foo',
  '"@authority": example.com',
  '"content-type": application/json',
  '"content-length": 18',
  '"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"',
].join('\n');

describe('RFC 9421 signatures (src/federation/http-signature.ts)', () => {
  it('builds the signature base of RFC 9421 B.2.6 and verifies its Ed25519 signature', () => {
    const input = parseSignatureInputField(B26_INPUT).get('sig-b26')!;
    const signature = parseSignatureField(B26_SIGNATURE).get('sig-b26')!;
    expect(signatureBase(RFC_REQUEST, input)).toBe(B26_BASE);
    expect(verifySignature(RFC_REQUEST, input, signature, createPublicKey(RFC_PUBLIC))).toBe(true);
    // Ed25519 is deterministic: signing the same base gives the RFC's bytes.
    const ours = signMessage(RFC_REQUEST, input, createPrivateKey(RFC_PRIVATE), 'sig-b26');
    expect(ours.signature).toBe(B26_SIGNATURE);
    expect(ours['signature-input']).toBe(B26_INPUT);
  });

  it('refuses the vector once any covered part changes', () => {
    const input = parseSignatureInputField(B26_INPUT).get('sig-b26')!;
    const signature = parseSignatureField(B26_SIGNATURE).get('sig-b26')!;
    const key = createPublicKey(RFC_PUBLIC);
    const changed: HttpMessage[] = [
      { ...RFC_REQUEST, method: 'PUT' },
      { ...RFC_REQUEST, url: 'https://example.com/bar' },
      { ...RFC_REQUEST, url: 'https://example.org/foo' },
      { ...RFC_REQUEST, headers: { ...RFC_REQUEST.headers, 'content-length': '19' } },
      {
        ...RFC_REQUEST,
        headers: { ...RFC_REQUEST.headers, date: 'Tue, 20 Apr 2021 02:07:56 GMT' },
      },
    ];
    for (const m of changed) expect(verifySignature(m, input, signature, key)).toBe(false);
    const noHeader = {
      ...RFC_REQUEST,
      headers: { ...RFC_REQUEST.headers, 'content-type': undefined },
    };
    expect(verifySignature(noHeader, input, signature, key)).toBe(false);
  });

  it('verifies the RFC vector with an independent implementation too', async () => {
    const pub = createPublicKey(RFC_PUBLIC);
    const ok = await httpbis.verifyMessage(
      {
        keyLookup: async () => ({
          id: 'test-key-ed25519',
          algs: ['ed25519'],
          verify: async (data: Buffer, sig: Buffer) => edVerify(null, data, pub, sig),
        }),
        tolerance: 10 * 365 * 24 * 3600,
      },
      {
        ...RFC_REQUEST,
        headers: {
          ...RFC_REQUEST.headers,
          'signature-input': B26_INPUT.replace('sig-b26=', 'sig-b26='),
          signature: B26_SIGNATURE,
        } as Record<string, string>,
      },
    );
    expect(ok).toBe(true);
  });

  it("the server's signed s2s requests verify with http-message-signatures, and its signatures with ours", async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const pair = generateKeyPairSync('ed25519');
    const raw = rawEd25519Public(pair.publicKey);
    const keys = {
      signing: pair.privateKey,
      signingPublic: pair.publicKey,
      signingPublicRaw: raw,
    } as ServerKeys;
    const client = new S2sClient({
      selfId: 'a.example',
      keys,
      clock: systemClock,
      timeoutMs: 1000,
      insecure: false,
    });
    const body = Buffer.from('{"user":"alice","devices":null}');
    const url = 'https://b.example/s2s/v1/revocations';
    const headers = client.signedHeaders('POST', url, { 'content-type': 'application/json' }, body);
    await client.close();
    expect(headers['content-digest']).toBe(contentDigest(body));
    const input = parseSignatureInputField(headers['signature-input']!).get('svc')!;
    expect(input.components).toEqual([
      '@method',
      '@target-uri',
      'content-digest',
      'date',
      'content-type',
    ]);
    expect(input.params.map(([k]) => k)).toEqual([
      'created',
      'expires',
      'nonce',
      'keyid',
      'alg',
      'tag',
    ]);

    let seenKeyid: unknown;
    const verified = await httpbis.verifyMessage(
      {
        keyLookup: async (params) => {
          seenKeyid = params.keyid;
          return {
            id: String(params.keyid),
            algs: ['ed25519'],
            verify: async (data: Buffer, sig: Buffer) => edVerify(null, data, pair.publicKey, sig),
          };
        },
        requiredFields: ['@method', '@target-uri', 'content-digest', 'date'],
        requiredParams: ['created', 'keyid', 'nonce'],
      },
      { method: 'POST', url, headers },
    );
    expect(verified).toBe(true);
    expect(seenKeyid).toBe(`a.example#${raw}`);

    // The other way round: the library signs, our verifier checks.
    const signed = await httpbis.signMessage(
      {
        key: {
          id: 'a.example',
          alg: 'ed25519',
          sign: async (data: Buffer) => edSign(null, data, pair.privateKey),
        },
        name: 'lib',
        fields: ['@method', '@target-uri', 'content-digest', 'date'],
        params: ['created', 'keyid', 'alg', 'nonce'],
        paramValues: { nonce: 'n0nce-n0nce-n0nce' },
      },
      {
        method: 'POST',
        url,
        headers: { date: new Date().toUTCString(), 'content-digest': contentDigest(body) },
      },
    );
    const h = Object.fromEntries(
      Object.entries(signed.headers as Record<string, string>).map(([k, v]) => [
        k.toLowerCase(),
        v,
      ]),
    );
    const libInput = parseSignatureInputField(h['signature-input']!).get('lib')!;
    const libSig = parseSignatureField(h.signature!).get('lib')!;
    expect(
      verifySignature({ method: 'POST', url, headers: h }, libInput, libSig, pair.publicKey),
    ).toBe(true);
  });
});
