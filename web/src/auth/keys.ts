// Device and identity keys (docs/keys.md) with WebCrypto Ed25519. A device key's private half is
// created non-extractable and kept in IndexedDB: script on this page can sign with it but never
// read it. The identity key stays exportable so its owner can download a backup.

export { b64url, newKeyPair, publicKeyOf, sign, statement } from './statement.ts';
import { publicKeyOf } from './statement.ts';

export function keySupport(): Promise<boolean> {
  if (!globalThis.crypto?.subtle || !globalThis.indexedDB) return Promise.resolve(false);
  return crypto.subtle
    .generateKey({ name: 'Ed25519' }, false, ['sign', 'verify'])
    .then(() => true)
    .catch(() => false);
}

// IndexedDB: one record per account signed up or linked on this browser.

export interface StoredAccount {
  username: string;
  devicePublicKey: string;
  device: CryptoKeyPair;
  identity?: CryptoKeyPair;
  createdAt: string;
}

const DB = 'svc-keys';
const STORE = 'accounts';

function open(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE, { keyPath: 'username' });
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function tx<T>(
  mode: IDBTransactionMode,
  f: (s: IDBObjectStore) => IDBRequest<T>,
): Promise<T> {
  const db = await open();
  try {
    return await new Promise<T>((resolve, reject) => {
      const req = f(db.transaction(STORE, mode).objectStore(STORE));
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  } finally {
    db.close();
  }
}

export function storedAccounts(): Promise<StoredAccount[]> {
  if (!globalThis.indexedDB) return Promise.resolve([]);
  return tx('readonly', (s) => s.getAll() as IDBRequest<StoredAccount[]>).catch(() => []);
}

export async function storeAccount(a: StoredAccount): Promise<void> {
  await tx('readwrite', (s) => s.put({ ...a, username: a.username.toLowerCase() }));
}

export async function forgetAccount(username: string): Promise<void> {
  await tx('readwrite', (s) => s.delete(username.toLowerCase()));
}

/** A file the person keeps: the identity key in JWK form, to recover the account later. */
export async function identityBackup(a: StoredAccount): Promise<Blob | null> {
  if (!a.identity) return null;
  const jwk = await crypto.subtle.exportKey('jwk', a.identity.privateKey);
  const body = {
    kind: 'svc-identity-key-backup',
    username: a.username,
    server: location.origin,
    identityPublicKey: await publicKeyOf(a.identity),
    privateKeyJwk: jwk,
    createdAt: a.createdAt,
  };
  return new Blob([JSON.stringify(body, null, 2)], { type: 'application/json' });
}
