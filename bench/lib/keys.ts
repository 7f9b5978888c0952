import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

import { gql, post, type Session } from './client.js';
import { rawEd25519Public } from '../../src/services/instance/server-keys.js';

export interface KeyPair {
  privateKey: KeyObject;
  publicRaw: string;
}

export function newKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicRaw: rawEd25519Public(publicKey) };
}

const signText = (key: KeyPair, text: string) =>
  sign(null, Buffer.from(text, 'utf8'), key.privateKey).toString('base64url');

/** The statement text of docs/keys.md. */
function statement(
  audience: string,
  server: string,
  nonce: string,
  issuedAt: string,
  extra: [string, string][],
): string {
  return [
    'svc-key-statement-v1',
    `audience: ${audience}`,
    `server: ${server}`,
    `nonce: ${nonce}`,
    `issued-at: ${issuedAt}`,
    ...extra.map(([k, v]) => `${k}: ${v}`),
  ].join('\n');
}

async function challenge(base: string) {
  const r = await gql(base, 'mutation { keyLoginChallenge { challengeId nonce serverKey } }');
  return r.data.keyLoginChallenge as { challengeId: string; nonce: string; serverKey: string };
}

export interface KeyAccount {
  username: string;
  device: KeyPair;
}

/** Creates a key account through signupWithKey (with an invite token, e.g. a workspace's). */
export async function signupWithKey(
  base: string,
  username: string,
  inviteToken: string | null,
): Promise<KeyAccount> {
  const identity = newKeyPair();
  const device = newKeyPair();
  const c = await challenge(base);
  const issuedAt = new Date().toISOString();
  const text = statement('signup', c.serverKey, c.nonce, issuedAt, [
    ['username', username],
    ['identity', identity.publicRaw],
    ['device', device.publicRaw],
  ]);
  const input = {
    username,
    identityPublicKey: identity.publicRaw,
    devicePublicKey: device.publicRaw,
    challengeId: c.challengeId,
    issuedAt,
    identitySignature: signText(identity, text),
    deviceSignature: signText(device, text),
    inviteToken,
  };
  await gql(base, 'mutation($i: SignupWithKeyInput!) { signupWithKey(input: $i) { csrfToken } }', {
    i: input,
  });
  return { username, device };
}

/** Signs a device in with its key: two requests, two signatures checked by the server. */
export async function loginWithKey(base: string, account: KeyAccount): Promise<Session> {
  const c = await challenge(base);
  const issuedAt = new Date().toISOString();
  const text = statement('login', c.serverKey, c.nonce, issuedAt, [
    ['device', account.device.publicRaw],
  ]);
  const body = JSON.stringify({
    query: 'mutation($p: KeyLoginProof!) { loginWithKey(proof: $p) { csrfToken user { id } } }',
    variables: {
      p: {
        challengeId: c.challengeId,
        devicePublicKey: account.device.publicRaw,
        issuedAt,
        signature: signText(account.device, text),
      },
    },
  });
  const res = await post(`${base}/api`, body);
  const parsed = JSON.parse(res.body);
  if (parsed.errors) throw new Error(`loginWithKey: ${JSON.stringify(parsed.errors)}`);
  return {
    userId: parsed.data.loginWithKey.user.id,
    cookie: res.setCookie.map((x) => x.split(';')[0]).join('; '),
    csrf: parsed.data.loginWithKey.csrfToken,
  };
}
