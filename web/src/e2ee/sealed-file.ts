// Files of encrypted conversations (docs/web-client-encrypted.md, "Attachments"): each file is
// encrypted in the page before upload with a fresh AES-256-GCM key, and the key, the blob's
// SHA-256, the file's name, type and size travel inside the MLS message. The server stores an
// `application/octet-stream` blob named `encrypted.bin` and learns only its size. WebCrypto
// alone: nothing of MLS is needed, so this stays out of the MLS chunk.
import { b64, unb64 } from './bytes.ts';
import { PREVIEW, THUMB_MAX, type SealedFileRef } from './sealed-refs.ts';

/** The longest side of a preview, in pixels. */
const THUMB_SIDE = 64;

/**
 * A preview of an image file (`thumb`), or null for another type, an image the browser cannot
 * decode, or one whose preview would be too long.
 */
export async function makeThumbnail(file: Blob): Promise<string | null> {
  if (!PREVIEW.test(file.type) || typeof OffscreenCanvas === 'undefined') return null;
  try {
    const whole = await createImageBitmap(file);
    const scale = Math.min(1, THUMB_SIDE / Math.max(whole.width, whole.height));
    const width = Math.max(1, Math.round(whole.width * scale));
    const height = Math.max(1, Math.round(whole.height * scale));
    const canvas = new OffscreenCanvas(width, height);
    const ctx = canvas.getContext('2d');
    if (!ctx) return null;
    ctx.drawImage(whole, 0, 0, width, height);
    whole.close();
    const jpeg = await canvas.convertToBlob({ type: 'image/jpeg', quality: 0.6 });
    const url = `data:image/jpeg;base64,${toBase64(new Uint8Array(await jpeg.arrayBuffer()))}`;
    return url.length <= THUMB_MAX ? url : null;
  } catch {
    return null;
  }
}

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
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
