import { fileTypeFromFile } from 'file-type';

import type { Db } from '../../db/database.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import { AppError } from '../../errors.js';
import { ATTACHMENT_MAX_BYTES, AttachmentTypeError, checkAttachmentFile, checkFileName, storeAttachmentBlob, type StoredUpload } from '../../services/attachments/index.js';
import { checkEmojiName, EMOJI_MAX_BYTES, EMOJI_MAX_SIDE, EMOJI_PER_WORKSPACE, countCustomEmoji, findCustomEmoji, insertCustomEmoji, newEmojiRow } from '../../services/emoji/index.js';
import { BlobTooLargeError, isAllowedAttachmentType, reencodeImage, IMAGE_EXTENSIONS, receiveToTemp, storeReencodedImage, UploadRefused, type BlobStore, type StoredImage } from '../../services/files/index.js';

import type { FileReference, ImportSource } from './model.js';
import type { ImportReport } from './report.js';

// The files an export carries (Mattermost's attachments and custom emoji images), stored as an
// upload would be: the same size limits, the same checks of the bytes against the type, images
// of emoji decoded and re-encoded. A file refused stays named in its message's text and is listed
// in the report with the reason.

/** Types by file-name extension: what a client would declare for the file at upload. */
const TYPE_BY_EXTENSION: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  heic: 'image/heic',
  avif: 'image/avif',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  json: 'application/json',
  zip: 'application/zip',
  gz: 'application/gzip',
  tgz: 'application/gzip',
  txt: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  html: 'text/html',
  htm: 'text/html',
  xml: 'text/xml',
  yaml: 'text/yaml',
  yml: 'text/yaml',
  // Formats that are ZIP archives underneath are attachments of type application/zip.
  docx: 'application/zip',
  xlsx: 'application/zip',
  pptx: 'application/zip',
  odt: 'application/zip',
  ods: 'application/zip',
  odp: 'application/zip',
  epub: 'application/zip',
};

/** A file of a message as the import found it: stored, or why not. */
export type ImportedFile =
  | { ok: true; fileName: string; stored: StoredUpload | null }
  | { ok: false; reason: string | null };

/**
 * Stores one file of a message (nothing is stored when `dryRun`; `stored` is then null, the
 * checks all made). `reason` is null for a file the export does not carry (only referenced).
 */
export async function importAttachment(
  blobs: BlobStore,
  source: Pick<ImportSource, 'openFile'>,
  ref: FileReference,
  dryRun: boolean,
): Promise<ImportedFile> {
  if (ref.location === null) return { ok: false, reason: null };
  let fileName: string;
  try {
    fileName = checkFileName(ref.name);
  } catch (err) {
    if (err instanceof AppError) return { ok: false, reason: err.message };
    throw err;
  }
  const stream = await source.openFile(ref.location);
  if (stream === null) return { ok: false, reason: null };
  let staged;
  try {
    staged = await blobs.stage(stream, { maxBytes: ATTACHMENT_MAX_BYTES });
  } catch (err) {
    if (err instanceof BlobTooLargeError) return { ok: false, reason: err.message };
    throw err;
  }
  try {
    const ext = /\.([a-z0-9]{1,5})$/i.exec(fileName)?.[1]?.toLowerCase();
    let type = ext ? TYPE_BY_EXTENSION[ext] : undefined;
    if (type === undefined) {
      const sniffed = (await fileTypeFromFile(staged.path))?.mime;
      if (sniffed && isAllowedAttachmentType(sniffed)) type = sniffed;
    }
    if (
      type === undefined ||
      !isAllowedAttachmentType(type) ||
      type === 'application/octet-stream'
    ) {
      return { ok: false, reason: `files like ${fileName} are not accepted as attachments` };
    }
    if (dryRun) {
      await checkAttachmentFile(staged, type);
      return { ok: true, fileName, stored: null };
    }
    return { ok: true, fileName, stored: await storeAttachmentBlob(blobs, staged, type) };
  } catch (err) {
    if (err instanceof AttachmentTypeError || err instanceof AppError) {
      return { ok: false, reason: err.message };
    }
    throw err;
  } finally {
    await staged.discard();
  }
}

/**
 * The export's custom emoji, in every workspace of the import (svc's emoji belong to a
 * workspace; Mattermost's to the instance). One the workspace has by that name already is left
 * as it is, so a second run changes nothing. An image is checked and re-encoded as
 * `createCustomEmoji` would (at most 256 KiB, PNG, JPEG, GIF or WebP, scaled to 128 pixels).
 */
export async function importEmoji(
  db: Db,
  blobs: BlobStore,
  source: ImportSource,
  workspaceIds: readonly string[],
  report: ImportReport,
  dryRun: boolean,
): Promise<void> {
  const targets = workspaceIds.filter((id) => id !== DIRECT_SPACE_ID);
  if (targets.length === 0) return;
  const now = Date.now();
  for (const e of source.emoji) {
    let name: string;
    try {
      name = checkEmojiName(e.name);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      report.problems.push({ ...e.place, message: `emoji "${e.name}": ${err.message}` });
      continue;
    }
    const wanted: string[] = [];
    for (const workspaceId of targets) {
      const known = !workspaceId.startsWith('dry-run:')
        ? await findCustomEmoji(db.kysely, workspaceId, name)
        : undefined;
      if (known) report.existing.customEmoji++;
      else wanted.push(workspaceId);
    }
    if (wanted.length === 0) continue;
    const image = await emojiImage(blobs, source, e.image, dryRun);
    if (typeof image === 'string') {
      report.problems.push({ ...e.place, message: `emoji :${name}:: ${image}` });
      continue;
    }
    if (image === null) {
      report.created.customEmoji += wanted.length; // a dry run: checked, not stored
      continue;
    }
    for (const workspaceId of wanted) {
      const full = await db.transaction(async (tx) => {
        if ((await countCustomEmoji(tx.db, workspaceId)) >= EMOJI_PER_WORKSPACE) return true;
        await insertCustomEmoji(tx.db, newEmojiRow(workspaceId, name, image, null, now));
        return false;
      });
      if (full) {
        report.problems.push({
          ...e.place,
          message: `emoji :${name}:: the workspace holds ${EMOJI_PER_WORKSPACE} custom emoji already`,
        });
      } else {
        report.created.customEmoji++;
      }
    }
  }
}

/** An emoji's image stored (null in a dry run, once checked), or why it cannot be. */
async function emojiImage(
  blobs: BlobStore,
  source: ImportSource,
  location: string,
  dryRun: boolean,
): Promise<StoredImage | null | string> {
  const stream = await source.openFile(location);
  if (stream === null) return `its image ${location} is not in the export`;
  let temp: Awaited<ReturnType<typeof receiveToTemp>> | null = null;
  try {
    temp = await receiveToTemp(blobs, stream, EMOJI_MAX_BYTES);
    // Mattermost names the file `image`, without a type: the bytes tell it.
    const type = (await fileTypeFromFile(temp.file))?.mime ?? '';
    if (dryRun) {
      if (!IMAGE_EXTENSIONS[type])
        return `images must be PNG, JPEG, GIF or WebP, not ${type || '(none)'}`;
      const decoded = await reencodeImage(temp.file, type, EMOJI_MAX_SIDE);
      return decoded.ok ? null : decoded.reason;
    }
    return await storeReencodedImage(blobs, temp.file, type, EMOJI_MAX_SIDE);
  } catch (err) {
    if (err instanceof UploadRefused) return err.message;
    throw err;
  } finally {
    await temp?.remove();
  }
}
