import {
  createECDH,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';

import type { Db } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';

import { getInstance, getServerKey, insertInstance, insertServerKey } from './queries.js';

export type KeyKind = 'signing' | 'franking' | 'cookie' | 'vapid';

/** What /readyz reports about one key. */
export type KeyCheck = { status: 'ok' } | { status: 'fail'; reason: string };

export interface ServerKeys {
  /** Ed25519 private key that signs the discovery document and server-to-server calls. */
  signing: KeyObject;
  signingPublic: KeyObject;
  /** Raw 32-byte public key, base64url, as published in the key log. */
  signingPublicRaw: string;
  /** Secret for message franking (reports of encrypted messages). */
  franking: Buffer;
  /** Secret for cookie-bound values such as the CSRF token. */
  cookie: Buffer;
}

/**
 * Creates the server keys on the first boot of a database and loads them afterwards. Keys are
 * never silently re-created on a database that has booted before: a lost key changes the
 * server's identity, so a running server reports it on /readyz and a booting one stops with
 * the same reason (restore the key from a backup).
 */
export async function loadOrCreateServerKeys(db: Db, clock: Clock): Promise<ServerKeys | null> {
  await createServerKeys(db, clock).catch(async (err: unknown) => {
    // Another process booting on the same empty database made them at the same moment (two
    // nodes started together): theirs are the ones kept.
    if (!(await getInstance(db.kysely))) throw err;
  });
  const checks = await checkServerKeys(db);
  // A lost key is never re-created (see above): boot stops with the reason /readyz would give.
  for (const check of [checks.serverKey, checks.frankingKey]) {
    if (check.status !== 'ok') throw new Error(check.reason);
  }
  const signingRow = await getServerKey(db.kysely, 'signing');
  const frankingRow = await getServerKey(db.kysely, 'franking');
  const cookieRow = await getServerKey(db.kysely, 'cookie');
  if (!signingRow || !frankingRow) return null;
  const signing = createPrivateKey({
    key: Buffer.from(signingRow.privateKey, 'base64'),
    format: 'der',
    type: 'pkcs8',
  });
  const signingPublic = createPublicKey(signing);
  return {
    signing,
    signingPublic,
    signingPublicRaw: rawEd25519Public(signingPublic),
    franking: Buffer.from(frankingRow.privateKey, 'base64'),
    // The cookie secret is not a readiness check; a database restored without it gets a fresh
    // one in memory, which only signs everybody out.
    cookie: cookieRow ? Buffer.from(cookieRow.privateKey, 'base64') : randomBytes(32),
  };
}

/** The instance row and the server keys of a database's first boot; nothing when it has them. */
async function createServerKeys(db: Db, clock: Clock): Promise<void> {
  await db.transaction(async (tx) => {
    const instance = await getInstance(tx.db);
    if (instance) return;
    const now = clock.now().getTime();
    await insertInstance(tx.db, now);
    const pair = generateKeyPairSync('ed25519');
    await insertServerKey(tx.db, {
      kind: 'signing',
      privateKey: pair.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
      publicKey: pair.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
      createdAt: now,
    });
    for (const kind of ['franking', 'cookie'] as const) {
      await insertServerKey(tx.db, {
        kind,
        privateKey: randomBytes(32).toString('base64'),
        publicKey: '',
        createdAt: now,
      });
    }
  });
}

/** Checks both keys /readyz reports, reading the database each time. */
export async function checkServerKeys(
  db: Db,
): Promise<{ serverKey: KeyCheck; frankingKey: KeyCheck }> {
  const signing = await getServerKey(db.kysely, 'signing');
  const franking = await getServerKey(db.kysely, 'franking');
  let serverKey: KeyCheck = { status: 'ok' };
  if (!signing) {
    serverKey = {
      status: 'fail',
      reason: 'the server signing key is missing from the database; restore it from a backup',
    };
  } else {
    try {
      const key = createPrivateKey({
        key: Buffer.from(signing.privateKey, 'base64'),
        format: 'der',
        type: 'pkcs8',
      });
      if (key.asymmetricKeyType !== 'ed25519') throw new Error('not ed25519');
    } catch {
      serverKey = { status: 'fail', reason: 'the server signing key is not a valid Ed25519 key' };
    }
  }
  let frankingKey: KeyCheck = { status: 'ok' };
  if (!franking) {
    frankingKey = {
      status: 'fail',
      reason: 'the franking key is missing from the database; restore it from a backup',
    };
  } else if (Buffer.from(franking.privateKey, 'base64').length !== 32) {
    frankingKey = { status: 'fail', reason: 'the franking key is not 32 bytes' };
  }
  return { serverKey, frankingKey };
}

/**
 * The raw 32 bytes of an Ed25519 public key, base64url: the end of its SPKI encoding. Not from a
 * JWK export: Node.js 20 can deadlock there when a collection runs during the export and
 * finalizes the job that generated the key (the export holds the key's lock while it allocates,
 * and the job's destructor takes the same lock), which hung a test process for good.
 */
export function rawEd25519Public(key: KeyObject): string {
  const der = key.export({ type: 'spki', format: 'der' });
  return der.subarray(der.length - 32).toString('base64url');
}

export function signBytes(keys: ServerKeys, data: Buffer): string {
  return sign(null, data, keys.signing).toString('base64url');
}

/** Verifies an Ed25519 signature made with a raw (base64url) public key. */
export function verifyWithRawPublic(rawPublic: string, data: Buffer, signature: string): boolean {
  try {
    const key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: rawPublic },
      format: 'jwk',
    });
    return verify(null, data, key, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}

/** The VAPID key pair of Web Push (RFC 8292): P-256, both halves base64url. */
export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/**
 * Loads the Web Push VAPID key pair, creating it on the first boot that needs it (a database
 * from before Web Push gets one on its next boot). Unlike the signing key it is not part of the
 * server's identity: a lost pair only means browsers must subscribe again.
 */
export async function loadOrCreateVapidKeys(db: Db, clock: Clock): Promise<VapidKeys> {
  const read = async () => {
    const row = await getServerKey(db.kysely, 'vapid');
    return row ? { publicKey: row.publicKey, privateKey: row.privateKey } : null;
  };
  const found = await read();
  if (found) return found;
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const pair = {
    publicKey: ecdh.getPublicKey().toString('base64url'),
    privateKey: ecdh.getPrivateKey().toString('base64url'),
  };
  try {
    await db.transaction(async (tx) => {
      if (await getServerKey(tx.db, 'vapid')) return;
      await insertServerKey(tx.db, { kind: 'vapid', ...pair, createdAt: clock.now().getTime() });
    });
  } catch (err) {
    // Another process made the pair at the same moment: theirs is the one kept.
    const other = await read();
    if (other) return other;
    throw err;
  }
  return (await read()) ?? pair;
}

/** When the signing key in use was made (the key log's first entry names it). */
export async function signingKeyCreatedAt(db: Db): Promise<number> {
  const row = await getServerKey(db.kysely, 'signing');
  if (!row) throw new Error('the signing key is missing from the database');
  return row.createdAt;
}
