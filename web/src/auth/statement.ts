// The signed key statement of docs/keys.md and the key encoding, free of browser APIs so the
// server's tests check them against the real server.

export function b64url(bytes: ArrayBuffer | Uint8Array): string {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let s = '';
  for (const x of b) s += String.fromCharCode(x);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The statement a key signs: exact lines joined by `\n`, nothing after the last. */
export function statement(
  audience: string,
  challenge: { serverKey: string; nonce: string },
  issuedAt: string,
  lines: [string, string][],
): string {
  return [
    'svc-key-statement-v1',
    `audience: ${audience}`,
    `server: ${challenge.serverKey}`,
    `nonce: ${challenge.nonce}`,
    `issued-at: ${issuedAt}`,
    ...lines.map(([k, v]) => `${k}: ${v}`),
  ].join('\n');
}

/** Signs a statement with an Ed25519 key through WebCrypto; the signature in base64url. */
export async function sign(key: CryptoKey, text: string): Promise<string> {
  return b64url(await crypto.subtle.sign({ name: 'Ed25519' }, key, new TextEncoder().encode(text)));
}

export async function newKeyPair(extractable: boolean): Promise<CryptoKeyPair> {
  return (await crypto.subtle.generateKey({ name: 'Ed25519' }, extractable, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
}

export async function publicKeyOf(pair: CryptoKeyPair): Promise<string> {
  return b64url(await crypto.subtle.exportKey('raw', pair.publicKey));
}
