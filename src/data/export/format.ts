// The export format (docs/export.md; every record's JSON Schema in docs/export.schema.json):
//
//   manifest.json          written last: format, scope, every file with its rows and sha256
//   <kind>.jsonl           one JSON object a line, one file per kind of record
//   files/<sha256>         the stored files the records name (attachments, avatars, emoji)
//
// Times are ISO 8601 in UTC with milliseconds; ids are the server's own. Encrypted conversations
// are exported as the server holds them: each message's MLS ciphertext (base64url), which only
// the members' devices can read; the server has no key to them.

export const EXPORT_FORMAT = 'svc-export';
/** Raised when a record or the layout changes in a way a reader of version 1 would misread. */
export const EXPORT_FORMAT_VERSION = 1;
export const EXPORT_MANIFEST = 'manifest.json';
export const EXPORT_FILES_DIR = 'files';

/** What the export covers. */
export type ExportScope =
  | { kind: 'workspace'; id: string; name: string }
  | { kind: 'account'; id: string; username: string };

/** One JSON Lines file: which record kind (a `$defs` name of the schema) it holds. */
export interface ExportPart {
  file: string;
  record: string;
  rows: number;
  bytes: number;
  sha256: string;
}

export interface ExportManifest {
  format: typeof EXPORT_FORMAT;
  formatVersion: number;
  svcVersion: string;
  /** When the export started: rows written after it may or may not be in it. */
  createdAt: string;
  scope: ExportScope;
  parts: ExportPart[];
  /** Stored files under files/, each named by the sha256 of its bytes. */
  files: { count: number; bytes: number };
  /** What the export says about encrypted conversations, in words. */
  encryption: string;
}

export const ENCRYPTION_NOTE =
  'Messages of end-to-end encrypted conversations are exported as the ciphertext the server holds (the "ciphertext" field, an MLS PrivateMessage in base64url) with "text" null, and their attachments as the encrypted bytes the server stores. The server never had the keys: only the members\' devices can read them.';

/** A 0/1 column as a JSON boolean (the export's representation; no rule is decided here). */
export const flag = (value: number): boolean => Boolean(value);

/** ms since the epoch as ISO 8601, or null. */
export const iso = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();

/** The sha256 named by a stored-file path such as `avatars/<sha256>.png`, or null. */
export function blobOfPath(p: string | null): string | null {
  const m = p ? /([0-9a-f]{64})/.exec(p) : null;
  return m ? m[1]! : null;
}
