import { b64url } from '../auth/statement.ts';

// The host's signing key as a client gets it (docs/federation.md, "The relay route"; docs/
// discovery.md): the host's discovery document through the relay, its key log checked link by
// link and its descriptor with the current key. The first log seen is pinned in this browser;
// afterwards only a log that extends the pinned one entry for entry is accepted (a rotation),
// anything else is refused as a fork, as a server does.

interface Signed {
  payload: string;
  signature: string;
}
interface DiscoveryDocument {
  keyLog?: Signed[];
  descriptor?: Signed;
}

/** The host's key log could not be checked: its answers cannot be trusted. */
export class HostKeyError extends Error {
  constructor(
    message: string,
    readonly hostServerId: string,
  ) {
    super(message);
    this.name = 'HostKeyError';
  }
}

const PIN = (host: string) => `svc-host-keys:${host}`;
const current = new Map<string, Promise<string[]>>();

function fromB64url(s: string): Uint8Array<ArrayBuffer> {
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export { fromB64url };

export async function verifyEd25519(
  key: string,
  data: Uint8Array<ArrayBuffer>,
  signature: string,
): Promise<boolean> {
  try {
    const k = await crypto.subtle.importKey('raw', fromB64url(key), { name: 'Ed25519' }, false, [
      'verify',
    ]);
    return await crypto.subtle.verify({ name: 'Ed25519' }, k, fromB64url(signature), data);
  } catch {
    return false;
  }
}

async function sha256b64url(text: string): Promise<string> {
  return b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
}

/** Checks a discovery document; answers its keys, oldest first (the last is the current one). */
export async function checkDocument(host: string, doc: DiscoveryDocument): Promise<string[]> {
  const log = doc.keyLog ?? [];
  if (!log.length) throw new HostKeyError('the host published no key log', host);
  const keys: string[] = [];
  let prevPayload: string | null = null;
  for (const [i, entry] of log.entries()) {
    const e = JSON.parse(entry.payload) as {
      type?: string;
      seq?: number;
      key?: string;
      prev?: string | null;
    };
    if (e.type !== 'svc.key-log.v1' || e.seq !== i || typeof e.key !== 'string') {
      throw new HostKeyError(`entry ${i} of the host's key log is malformed`, host);
    }
    const expectedPrev = prevPayload === null ? null : await sha256b64url(prevPayload);
    if ((e.prev ?? null) !== expectedPrev) {
      throw new HostKeyError(
        `entry ${i} of the host's key log does not follow the one before`,
        host,
      );
    }
    const signer = keys.at(-1) ?? e.key;
    if (!(await verifyEd25519(signer, new TextEncoder().encode(entry.payload), entry.signature))) {
      throw new HostKeyError(`entry ${i} of the host's key log is not signed by its key`, host);
    }
    keys.push(e.key);
    prevPayload = entry.payload;
  }
  const d = doc.descriptor;
  if (!d) throw new HostKeyError('the host published no descriptor', host);
  const key = keys.at(-1)!;
  if (!(await verifyEd25519(key, new TextEncoder().encode(d.payload), d.signature))) {
    throw new HostKeyError("the host's descriptor is not signed by its current key", host);
  }
  const desc = JSON.parse(d.payload) as { serverId?: string; key?: string };
  if (desc.serverId !== host || desc.key !== key) {
    throw new HostKeyError(`the descriptor names ${String(desc.serverId)}, not ${host}`, host);
  }
  return keys;
}

function pinned(host: string): string[] | null {
  try {
    const v = JSON.parse(localStorage.getItem(PIN(host)) ?? 'null') as unknown;
    return Array.isArray(v) && v.every((k) => typeof k === 'string') ? (v as string[]) : null;
  } catch {
    return null;
  }
}

async function fetchKeys(host: string): Promise<string[]> {
  let res: Response;
  try {
    res = await fetch(`/api/remote/${host}/.well-known/svc-server`, { credentials: 'same-origin' });
  } catch {
    throw new HostKeyError('the server could not be reached', host);
  }
  if (!res.ok) throw new HostKeyError(`the host's discovery document answered ${res.status}`, host);
  const keys = await checkDocument(host, (await res.json()) as DiscoveryDocument);
  const pin = pinned(host);
  if (pin && (pin.length > keys.length || pin.some((k, i) => keys[i] !== k))) {
    throw new HostKeyError(
      "the host's key log does not extend the one this browser pinned (fork); keeping the pin",
      host,
    );
  }
  localStorage.setItem(PIN(host), JSON.stringify(keys));
  return keys;
}

/**
 * The host's keys: pinned ones at once, else the discovery document. `refresh` reads the
 * document again (a signature by a key the pin does not know: perhaps a rotation).
 */
export function hostKeys(host: string, refresh = false): Promise<string[]> {
  const pin = pinned(host);
  if (pin && !refresh) return Promise.resolve(pin);
  let p = current.get(host);
  if (!p || refresh) {
    p = fetchKeys(host).finally(() => current.delete(host));
    current.set(host, p);
  }
  return p;
}
