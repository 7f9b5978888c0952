import { randomBytes } from 'node:crypto';
import { constants as fsConstants, type ReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

import { BlobTooLargeError, type BlobStore } from './blob-store.js';
import { reencodeImage } from './image-reencode.js';

/**
 * An upload refused for what it is (not for who sent it): 400 malformed or empty, 413 over the
 * limit, 415 a type the route does not take or bytes that do not match it. File routes answer
 * it with its status and message.
 */
export class UploadRefused extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
    this.name = 'UploadRefused';
  }
}

/** An upload held in a temporary file of the blob store until it is checked. */
export interface TempUpload {
  file: string;
  sizeBytes: number;
  /** Removes the temporary file (idempotent). */
  remove(): Promise<void>;
}

/**
 * Streams an upload into a temporary file under the blob store's `tmp/` (the same volume, and
 * the sweep removes what a crash leaves there). Refuses with 413 as soon as more than `maxBytes`
 * arrive, and with 400 an empty file; any failure removes the file.
 */
export async function receiveToTemp(
  store: BlobStore,
  source: AsyncIterable<Uint8Array>,
  maxBytes: number,
): Promise<TempUpload> {
  const dir = path.join(store.root, 'tmp');
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, `upload-${Date.now()}-${randomBytes(8).toString('hex')}`);
  const remove = () => fs.rm(file, { force: true });
  const handle = await fs.open(file, 'wx', 0o600);
  let size = 0;
  try {
    for await (const chunk of source) {
      size += chunk.byteLength;
      if (size > maxBytes) throw new BlobTooLargeError(maxBytes);
      await handle.write(chunk);
    }
    await handle.close();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await remove();
    if (err instanceof BlobTooLargeError) {
      throw new UploadRefused(413, `the file is larger than ${maxBytes} bytes`);
    }
    throw err;
  }
  if (size === 0) {
    await remove();
    throw new UploadRefused(400, 'the file is empty');
  }
  return { file, sizeBytes: size, remove };
}

/** File name extensions of the image types served back, by type. */
export const IMAGE_EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** The type of a served image by its extension (the inverse of IMAGE_EXTENSIONS). */
export const IMAGE_TYPE_BY_EXTENSION: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(IMAGE_EXTENSIONS).map(([type, ext]) => [ext, type]),
);

/** A re-encoded image stored in the blob store. */
export interface StoredImage {
  sha256: string;
  sizeBytes: number;
  contentType: string;
  extension: string;
  width: number;
  height: number;
}

/**
 * Decodes an uploaded image, re-encodes its pixels (reencodeImage: metadata dropped, size capped
 * at `maxSide`) and stores only the result. A type other than PNG, JPEG, GIF or WebP, or bytes
 * of another format, are refused with 415; bytes that do not decode with 400.
 */
export async function storeReencodedImage(
  store: BlobStore,
  file: string,
  declaredType: string,
  maxSide: number,
): Promise<StoredImage> {
  const type = declaredType.split(';')[0]!.trim().toLowerCase();
  const extension = IMAGE_EXTENSIONS[type];
  if (!extension) {
    throw new UploadRefused(415, `images must be PNG, JPEG, GIF or WebP, not ${type || '(none)'}`);
  }
  const out = await reencodeImage(file, type, maxSide);
  if (!out.ok) throw new UploadRefused(out.status, out.reason);
  const blob = await store.put(
    (async function* () {
      yield out.bytes;
    })(),
    { maxBytes: Number.MAX_SAFE_INTEGER },
  );
  return {
    sha256: blob.sha256,
    sizeBytes: blob.sizeBytes,
    contentType: type,
    extension,
    width: out.width,
    height: out.height,
  };
}

/** `avatars/<sha256>.<ext>`: the one form of a served image path (avatars and custom emoji). */
const IMAGE_PATH = /^avatars\/([0-9a-f]{64})\.(png|jpg|gif|webp)$/;

/** The path under /api/files/ of a stored image. */
export function imagePath(image: { sha256: string; extension: string }): string {
  return `avatars/${image.sha256}.${image.extension}`;
}

/** The URL path a client reads an image back from. */
export function imageUrl(imagePathValue: string): string {
  return `/api/files/${imagePathValue}`;
}

/**
 * Parses a served image path strictly: exactly `avatars/<64 lowercase hex>.<png|jpg|gif|webp>`,
 * as the request sent it (no decoding). Anything else is null; it never becomes a file path.
 */
export function parseImagePath(
  value: string,
): { path: string; sha256: string; contentType: string } | null {
  const m = IMAGE_PATH.exec(value);
  if (!m) return null;
  return { path: value, sha256: m[1]!, contentType: IMAGE_TYPE_BY_EXTENSION[m[2]!]! };
}

/**
 * Paths an image of these blob names could be served under (every extension), for the reference
 * sources of the areas that store images by path.
 */
export function imagePathsOf(names: readonly string[]): string[] {
  const exts = Object.values(IMAGE_EXTENSIONS);
  return names.flatMap((n) => exts.map((extension) => imagePath({ sha256: n, extension })));
}

/** Names (sha256) of the image paths given. */
export function namesOfImagePaths(paths: Iterable<string | null>): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const parsed = p === null ? null : parseImagePath(p);
    if (parsed) out.push(parsed.sha256);
  }
  return out;
}

/**
 * Opens a stored blob for reading without following a symbolic link anywhere under the store
 * (a link planted in the data directory serves nothing): the shard folders must resolve to
 * themselves and the file is opened with O_NOFOLLOW and must be a regular file. Null when there
 * is no such blob.
 */
export async function openBlobNoFollow(
  store: BlobStore,
  sha256: string,
): Promise<{ stream: ReadStream; sizeBytes: number } | null> {
  const file = store.pathOf(sha256);
  const realRoot = await fs.realpath(store.root).catch(() => null);
  const realDir = await fs.realpath(path.dirname(file)).catch(() => null);
  if (realRoot === null || realDir !== path.join(realRoot, sha256.slice(0, 2), sha256.slice(2, 4)))
    return null;
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch {
    return null;
  }
  const st = await handle.stat();
  if (!st.isFile()) {
    await handle.close();
    return null;
  }
  return { stream: handle.createReadStream(), sizeBytes: st.size };
}
