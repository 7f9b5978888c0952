import { createReadStream } from 'node:fs';

import { fileTypeFromFile } from 'file-type';

/**
 * The attachment types the contract lists: `image/*`, `text/*`, `application/pdf`,
 * `application/json`, `application/zip`, `application/gzip`, and `application/octet-stream` (only
 * for the blob of an encrypted conversation; the attachment service decides that).
 * `image/svg+xml` is refused: an SVG is a document that can carry script.
 */
export type TypeCheck = { ok: true; contentType: string } | { ok: false; reason: string };

const EXACT = new Set([
  'application/pdf',
  'application/json',
  'application/zip',
  'application/gzip',
]);

/** Formats that are zip archives underneath; declared as `application/zip` they are accepted. */
const ZIP_BASED = new Set([
  'zip',
  'docx',
  'xlsx',
  'pptx',
  'odt',
  'ods',
  'odp',
  'epub',
  'jar',
  'apk',
]);

/** Normalizes a declared type (`Image/PNG; charset=x` → `image/png`); null when malformed. */
export function normalizeType(declared: string): string | null {
  const base = declared.split(';')[0]!.trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(base) ? base : null;
}

/** Whether a declared type is one an attachment may have at all (before looking at the bytes). */
export function isAllowedAttachmentType(type: string): boolean {
  if (type === 'image/svg+xml') return false;
  return (
    type.startsWith('image/') ||
    type.startsWith('text/') ||
    EXACT.has(type) ||
    type === 'application/octet-stream'
  );
}

/**
 * Checks a stored file's bytes against its declared type, never trusting the declaration: images,
 * PDF, zip and gzip by magic numbers (file-type), `text/*` must be valid UTF-8 and not a known
 * binary format, `application/json` must be valid UTF-8 that parses. Reads the file in chunks;
 * only JSON is parsed whole (at most the 25 MiB upload limit).
 */
export async function checkStoredType(file: string, declared: string): Promise<TypeCheck> {
  const type = normalizeType(declared);
  if (type === null || !isAllowedAttachmentType(type)) {
    return { ok: false, reason: `files of type ${declared} are not accepted` };
  }
  if (type === 'application/octet-stream') return { ok: true, contentType: type };
  const sniffed = await fileTypeFromFile(file);
  if (type.startsWith('image/') || type === 'application/pdf' || type === 'application/gzip') {
    if (sniffed?.mime === type) return { ok: true, contentType: type };
    return { ok: false, reason: mismatch(type, sniffed?.mime) };
  }
  if (type === 'application/zip') {
    if (sniffed && ZIP_BASED.has(sniffed.ext)) return { ok: true, contentType: type };
    return { ok: false, reason: mismatch(type, sniffed?.mime) };
  }
  // text/* and application/json
  if (sniffed) return { ok: false, reason: mismatch(type, sniffed.mime) };
  const text = await readUtf8(file, type === 'application/json');
  if (text === null) return { ok: false, reason: `a ${type} file must be valid UTF-8` };
  if (type === 'application/json') {
    try {
      JSON.parse(text);
    } catch {
      return { ok: false, reason: 'the file is not valid JSON' };
    }
  }
  return { ok: true, contentType: type };
}

function mismatch(declared: string, sniffed: string | undefined): string {
  return sniffed
    ? `the file's bytes are ${sniffed}, not ${declared}`
    : `the file's bytes do not match ${declared}`;
}

/** Validates UTF-8 chunk by chunk; keeps the text only when asked. Null when not UTF-8. */
async function readUtf8(file: string, keep: true | false): Promise<string | null> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let text = '';
  try {
    for await (const chunk of createReadStream(file)) {
      const part = decoder.decode(chunk as Buffer, { stream: true });
      if (keep) text += part;
    }
    const last = decoder.decode();
    if (keep) text += last;
  } catch (err) {
    if (err instanceof TypeError) return null;
    throw err;
  }
  return text;
}
