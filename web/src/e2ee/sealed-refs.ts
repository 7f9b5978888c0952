// What an encrypted message says of its files (docs/web-client-encrypted.md, "Attachments"), as
// the receiving page reads it from the decrypted body: only well-formed references are kept, and
// an image's preview only as a small JPEG `data:` address. No imports: the tests read it as is.

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
  /**
   * For an image: a small JPEG of it (`data:image/jpeg;base64,...`, at most 64 px a side),
   * shown before the file is downloaded, as Signal and WhatsApp do; it travels inside the
   * encrypted message only.
   */
  thumb?: string;
}

/** Image types shown in the page once decrypted (never as a document: an image cannot run). */
export const PREVIEW = /^image\/(png|jpeg|gif|webp|avif|bmp)$/;

/** The longest preview kept, in characters of its `data:` address (a 64 px JPEG is 1-3 KB). */
export const THUMB_MAX = 8000;
const THUMB_FORM = /^data:image\/jpeg;base64,[A-Za-z0-9+/]+={0,2}$/;

/** The files an encrypted message's decrypted body names (none when it cannot be read). */
export function sealedRefs(body: string | undefined): SealedFileRef[] {
  if (!body) return [];
  try {
    const v = JSON.parse(body) as { files?: unknown };
    if (!Array.isArray(v.files)) return [];
    return v.files
      .filter(
        (f): f is SealedFileRef =>
          typeof f === 'object' &&
          f !== null &&
          ['id', 'name', 'type', 'key', 'sha256'].every(
            (k) => typeof (f as Record<string, unknown>)[k] === 'string',
          ) &&
          typeof (f as Record<string, unknown>).size === 'number',
      )
      .map((f) => {
        // A preview is shown only as a small JPEG: anything else a sender put there is dropped.
        const { thumb, ...ref } = f;
        return typeof thumb === 'string' && thumb.length <= THUMB_MAX && THUMB_FORM.test(thumb)
          ? { ...ref, thumb }
          : ref;
      });
  } catch {
    return [];
  }
}
