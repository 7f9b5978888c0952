// What the MLS worker keeps in IndexedDB (database `svc-e2ee`), sealed at rest. MLS's own private
// keys (HPKE and signature keys inside ts-mls) are raw bytes the library computes with, so they
// cannot be WebCrypto keys; every record holding them, and every plaintext this browser read, is
// sealed with AES-GCM under one non-extractable WebCrypto key made here and kept in the same
// database: script of this origin can use it, nothing can read it out, and a copy of the
// database's files alone opens nothing.

const DB = 'svc-e2ee';
/** Stores: `wrap` (the sealing key), `packages`, `groups`, `plain` (keyed by device, then id). */
const STORES = ['wrap', 'packages', 'groups', 'plain'] as const;
type Store = (typeof STORES)[number];

let dbPromise: Promise<IDBDatabase> | null = null;

function db(): Promise<IDBDatabase> {
  dbPromise ??= new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => {
      for (const s of STORES) req.result.createObjectStore(s);
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  return dbPromise;
}

function done<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function put(store: Store, key: string, value: unknown): Promise<void> {
  const d = await db();
  await done(d.transaction(store, 'readwrite').objectStore(store).put(value, key));
}

async function get<T>(store: Store, key: string): Promise<T | undefined> {
  const d = await db();
  return (await done(d.transaction(store, 'readonly').objectStore(store).get(key))) as
    T | undefined;
}

async function del(store: Store, key: string): Promise<void> {
  const d = await db();
  await done(d.transaction(store, 'readwrite').objectStore(store).delete(key));
}

/** Every record of one device in a store (keys `<deviceId>:...`). */
async function allOf<T>(store: Store, deviceId: string): Promise<Array<{ key: string; value: T }>> {
  const d = await db();
  const range = IDBKeyRange.bound(`${deviceId}:`, `${deviceId}:\uffff`);
  const os = d.transaction(store, 'readonly').objectStore(store);
  const [keys, values] = await Promise.all([
    done(os.getAllKeys(range)),
    done(os.getAll(range) as IDBRequest<T[]>),
  ]);
  return keys.map((k, i) => ({ key: String(k), value: values[i] as T }));
}

let sealing: Promise<CryptoKey> | null = null;

/** The browser's sealing key: AES-GCM, made non-extractable on first use. */
function sealKey(): Promise<CryptoKey> {
  sealing ??= (async () => {
    const had = await get<CryptoKey>('wrap', 'aes');
    if (had) return had;
    const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, [
      'encrypt',
      'decrypt',
    ]);
    await put('wrap', 'aes', key);
    return key;
  })();
  return sealing;
}

interface Sealed {
  iv: Uint8Array;
  data: ArrayBuffer;
}

async function seal(bytes: Uint8Array, aad: string): Promise<Sealed> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(aad) },
    await sealKey(),
    bytes as Uint8Array<ArrayBuffer>,
  );
  return { iv, data };
}

async function unseal(s: Sealed, aad: string): Promise<Uint8Array> {
  return new Uint8Array(
    await crypto.subtle.decrypt(
      {
        name: 'AES-GCM',
        iv: s.iv as Uint8Array<ArrayBuffer>,
        additionalData: new TextEncoder().encode(aad),
      },
      await sealKey(),
      s.data,
    ),
  );
}

/** Sealed byte records: the key names the record and is bound into the seal. */
export const vault = {
  async put(store: 'packages' | 'groups' | 'plain', key: string, bytes: Uint8Array, meta = {}) {
    await put(store, key, { ...meta, sealed: await seal(bytes, `${store}/${key}`) });
  },
  async get(store: 'packages' | 'groups' | 'plain', key: string): Promise<Uint8Array | null> {
    const r = await get<{ sealed: Sealed }>(store, key);
    return r ? unseal(r.sealed, `${store}/${key}`) : null;
  },
  async meta<T>(store: 'packages' | 'groups' | 'plain', key: string): Promise<T | undefined> {
    return get<T>(store, key);
  },
  async all(store: 'packages' | 'groups' | 'plain', deviceId: string) {
    const rows = await allOf<{ sealed: Sealed } & Record<string, unknown>>(store, deviceId);
    return Promise.all(
      rows.map(async (r) => ({
        key: r.key,
        meta: r.value,
        bytes: await unseal(r.value.sealed, `${store}/${r.key}`),
      })),
    );
  },
  delete: (store: 'packages' | 'groups' | 'plain', key: string) => del(store, key),
};

/**
 * Opens the database ahead of a read of kept texts (./kept.ts), so that opening it is not on the
 * way to the first page of an encrypted conversation: called once the person has one, and as
 * such a conversation's page is asked for.
 */
export function warmVault(): void {
  db().catch(() => undefined);
}

/**
 * The kept texts of these messages for one device, read in one transaction and unsealed at
 * once, by message id; an absent one is left out. Used by the page as well as the worker: it
 * never makes the sealing key, so a browser that has none yet reads nothing.
 */
export async function keptPlain(
  deviceId: string,
  messageIds: string[],
): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  if (!messageIds.length) return out;
  const d = await db();
  const tx = d.transaction(['wrap', 'plain'], 'readonly');
  const key = done(tx.objectStore('wrap').get('aes') as IDBRequest<CryptoKey | undefined>);
  const plain = tx.objectStore('plain');
  const rows = messageIds.map((id) => done(plain.get(`${deviceId}:${id}`)));
  const aes = await key;
  const found = (await Promise.all(rows)) as Array<{ sealed: Sealed } | undefined>;
  if (!aes) return out;
  sealing ??= Promise.resolve(aes);
  await Promise.all(
    found.map(async (r, i) => {
      if (!r) return;
      try {
        out.set(messageIds[i]!, await unseal(r.sealed, `plain/${deviceId}:${messageIds[i]}`));
      } catch {
        // A record that does not open is read as absent: the worker decrypts that message.
      }
    }),
  );
  return out;
}
