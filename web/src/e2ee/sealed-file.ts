// Files of encrypted conversations (docs/web-client-encrypted.md, "Attachments"): each file is
// encrypted in the page before upload with a fresh AES-256-GCM key, and the key, the blob's
// SHA-256, the file's name, type and size travel inside the MLS message. The server stores an
// `application/octet-stream` blob named `encrypted.bin` and learns only its size. WebCrypto
// alone: nothing of MLS is needed, so this stays out of the MLS chunk.
import { b64, unb64 } from './bytes.ts';

/** What the encrypted message says of one of its files. */
export interface SealedFileRef {
  /** The attachment's id on the server. */
  id: string;
  name: string;
  type: string;
  size: number;
  /** The AES-256-GCM key, raw, unpadded base64url. */
  key: string;
  /** SHA-256 of the blob as uploaded (IV then ciphertext), unpadded base64url. */
  sha256: string;
}

/** Bytes the blob adds to the file: the IV and GCM's tag. */
export const SEAL_OVERHEAD = 12 + 16;

/** Encrypts a file: the blob to upload, and its key and hash for the message. */
export async function sealFile(file: Blob): Promise<{ blob: Blob; key: string; sha256: string }> {
  const raw = crypto.getRandomValues(new Uint8Array(32));
  const key = await crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt']);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, await file.arrayBuffer());
  const out = new Uint8Array(iv.length + ct.byteLength);
  out.set(iv);
  out.set(new Uint8Array(ct), iv.length);
  const sha = new Uint8Array(await crypto.subtle.digest('SHA-256', out));
  return {
    blob: new Blob([out], { type: 'application/octet-stream' }),
    key: b64(raw),
    sha256: b64(sha),
  };
}

/** Thrown when a downloaded blob is not the one the sender encrypted. */
export class SealBroken extends Error {
  constructor() {
    super('This file is not the one its sender encrypted, so it is not opened.');
    this.name = 'SealBroken';
  }
}

/** Checks a downloaded blob against the message's hash, then decrypts it. */
export async function openFile(blob: ArrayBuffer, ref: SealedFileRef): Promise<Uint8Array> {
  const sha = new Uint8Array(await crypto.subtle.digest('SHA-256', blob));
  if (b64(sha) !== ref.sha256) throw new SealBroken();
  const key = await crypto.subtle.importKey('raw', unb64(ref.key), 'AES-GCM', false, ['decrypt']);
  const bytes = new Uint8Array(blob);
  try {
    const pt = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: bytes.slice(0, 12) },
      key,
      bytes.slice(12),
    );
    return new Uint8Array(pt);
  } catch {
    throw new SealBroken();
  }
}

/** The files an encrypted message's decrypted body names (none when it cannot be read). */
export function sealedRefs(body: string | undefined): SealedFileRef[] {
  if (!body) return [];
  try {
    const v = JSON.parse(body) as { files?: unknown };
    if (!Array.isArray(v.files)) return [];
    return v.files.filter(
      (f): f is SealedFileRef =>
        typeof f === 'object' &&
        f !== null &&
        ['id', 'name', 'type', 'key', 'sha256'].every(
          (k) => typeof (f as Record<string, unknown>)[k] === 'string',
        ) &&
        typeof (f as Record<string, unknown>).size === 'number',
    );
  } catch {
    return [];
  }
}
