import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';

import type { Db } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import { conflict } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import {
  getServerKey,
  replaceServerKey,
  rawEd25519Public,
  signBytes,
  verifyWithRawPublic,
  type ServerKeys,
} from '../services/instance/index.js';

import { insertKeyLogEntry, listKeyLog } from './queries.js';

/** A signed statement: `payload` is the exact JSON text signed; `signature` base64url Ed25519. */
export interface Signed {
  payload: string;
  signature: string;
}

export interface KeyLogEntry {
  type: 'svc.key-log.v1';
  seq: number;
  alg: 'ed25519';
  key: string;
  prev: string | null;
  createdAt: string;
}

export class KeyLogError extends Error {}

/** The unpadded base64url SHA-256 of a payload's bytes: the next entry's `prev`. */
export const payloadHash = (payload: string): string =>
  createHash('sha256').update(payload, 'utf8').digest('base64url');

/**
 * Checks a key log (docs/discovery.md): entry 0 signed by its own key, each later one by the key
 * before it, with `seq` counting up and `prev` naming the previous payload. Answers the keys in
 * order; throws KeyLogError naming the first fault.
 */
export function verifyKeyLog(log: unknown): { entries: KeyLogEntry[]; keys: string[] } {
  if (!Array.isArray(log) || log.length === 0) throw new KeyLogError('the key log is empty');
  const entries: KeyLogEntry[] = [];
  let prevKey: string | null = null;
  let prevPayload: string | null = null;
  for (const [i, item] of log.entries()) {
    const s = item as Partial<Signed>;
    if (typeof s?.payload !== 'string' || typeof s.signature !== 'string') {
      throw new KeyLogError(`key log entry ${i} is not a signed statement`);
    }
    let e: KeyLogEntry;
    try {
      e = JSON.parse(s.payload) as KeyLogEntry;
    } catch {
      throw new KeyLogError(`key log entry ${i} is not JSON`);
    }
    if (e.type !== 'svc.key-log.v1' || e.alg !== 'ed25519' || typeof e.key !== 'string') {
      throw new KeyLogError(`key log entry ${i} is not an ed25519 key-log entry`);
    }
    if (e.seq !== i) throw new KeyLogError(`key log entry ${i} has seq ${String(e.seq)}`);
    const expectedPrev = prevPayload === null ? null : payloadHash(prevPayload);
    if (e.prev !== expectedPrev) throw new KeyLogError(`key log entry ${i} names another prev`);
    const signer = prevKey ?? e.key;
    if (!verifyWithRawPublic(signer, Buffer.from(s.payload, 'utf8'), s.signature)) {
      throw new KeyLogError(`key log entry ${i} is not signed by the key before it`);
    }
    entries.push(e);
    prevKey = e.key;
    prevPayload = s.payload;
  }
  return { entries, keys: entries.map((e) => e.key) };
}

/**
 * This server's key log, kept in `server_key_log`. The first entry is written on the first start
 * with the key log code (and matches the entry discovery served before there was a table). A
 * rotation (`svc server-key rotate`) appends an entry signed by the old key and replaces the
 * signing key; every process notices within REFRESH_MS and switches `keys` in place.
 */
export class ServerKeyLog {
  static readonly REFRESH_MS = 5_000;
  private cached: Signed[] = [];
  private checkedAt = -Infinity;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly keys: ServerKeys,
    private readonly keyCreatedAt: number,
  ) {}

  /** Writes entry 0 when the log is empty, then loads it. */
  async ensure(): Promise<void> {
    const rows = await listKeyLog(this.db.kysely);
    if (rows.length === 0) {
      const entry: KeyLogEntry = {
        type: 'svc.key-log.v1',
        seq: 0,
        alg: 'ed25519',
        key: this.keys.signingPublicRaw,
        prev: null,
        createdAt: new Date(this.keyCreatedAt).toISOString(),
      };
      const payload = JSON.stringify(entry);
      try {
        await insertKeyLogEntry(this.db.kysely, {
          seq: 0,
          payload,
          signature: signBytes(this.keys, Buffer.from(payload, 'utf8')),
          createdAt: this.keyCreatedAt,
        });
      } catch (err) {
        // Another process wrote it first.
        if (!isUniqueViolation(err)) throw err;
      }
    }
    await this.refresh(true);
  }

  /** The log as published, oldest first. */
  entries(): Signed[] {
    return this.cached;
  }

  /** The current key (the last entry's), raw base64url. */
  currentKey(): string {
    return this.keys.signingPublicRaw;
  }

  /**
   * Rereads the log when older than REFRESH_MS (or when `force`), and takes up a rotation another
   * process made: the signing key is reloaded and `keys` updated in place.
   */
  async refresh(force = false): Promise<void> {
    const now = this.clock.now().getTime();
    if (!force && now - this.checkedAt < ServerKeyLog.REFRESH_MS) return;
    this.checkedAt = now;
    const rows = await listKeyLog(this.db.kysely);
    this.cached = rows.map((r) => ({ payload: r.payload, signature: r.signature }));
    const last = rows.at(-1);
    if (!last) return;
    const lastKey = (JSON.parse(last.payload) as KeyLogEntry).key;
    if (lastKey === this.keys.signingPublicRaw) return;
    const row = await getServerKey(this.db.kysely, 'signing');
    if (!row) return;
    const signing = createPrivateKey({
      key: Buffer.from(row.privateKey, 'base64'),
      format: 'der',
      type: 'pkcs8',
    });
    const signingPublic = createPublicKey(signing);
    if (rawEd25519Public(signingPublic) !== lastKey) return;
    this.keys.signing = signing;
    this.keys.signingPublic = signingPublic;
    this.keys.signingPublicRaw = lastKey;
  }

  /**
   * Rotates the signing key: a new Ed25519 key, an entry signed by the current one, and the
   * stored key replaced, in one transaction. CONFLICT when another rotation won the race.
   */
  async rotate(): Promise<{ seq: number; key: string; previousKey: string }> {
    const now = this.clock.now().getTime();
    const pair = generateKeyPairSync('ed25519');
    const newKey = rawEd25519Public(pair.publicKey);
    try {
      return await this.db.transaction(async (tx) => {
        const rows = await listKeyLog(tx.db);
        const last = rows.at(-1);
        if (!last) throw new KeyLogError('the key log is empty; start the server once first');
        const signingRow = await getServerKey(tx.db, 'signing');
        if (!signingRow) throw new KeyLogError('the server signing key is missing');
        const current = createPrivateKey({
          key: Buffer.from(signingRow.privateKey, 'base64'),
          format: 'der',
          type: 'pkcs8',
        });
        const currentKey = rawEd25519Public(createPublicKey(current));
        const lastEntry = JSON.parse(last.payload) as KeyLogEntry;
        if (lastEntry.key !== currentKey) {
          throw new KeyLogError('the key log does not end with the stored signing key');
        }
        const entry: KeyLogEntry = {
          type: 'svc.key-log.v1',
          seq: last.seq + 1,
          alg: 'ed25519',
          key: newKey,
          prev: payloadHash(last.payload),
          createdAt: new Date(now).toISOString(),
        };
        const payload = JSON.stringify(entry);
        const signature = signBytes(
          { ...this.keys, signing: current },
          Buffer.from(payload, 'utf8'),
        );
        await insertKeyLogEntry(tx.db, { seq: entry.seq, payload, signature, createdAt: now });
        await replaceServerKey(tx.db, {
          kind: 'signing',
          privateKey: pair.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
          publicKey: pair.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
          createdAt: now,
        });
        return { seq: entry.seq, key: newKey, previousKey: currentKey };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('another key rotation ran at the same time');
      throw err;
    } finally {
      await this.refresh(true);
    }
  }
}
