import { createHash } from 'node:crypto';

import type { Logger } from 'pino';
import sharp from 'sharp';

import { actingAccountId, type Actor } from '../../auth/actor.js';
import { assertFeature } from '../../config/feature-guard.js';
import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import type { AttachmentTable } from '../../db/tables/attachments.js';
import type { Tx } from '../../db/transaction.js';
import { conflict, forbidden, notFound, validation } from '../../errors.js';
import type { AttachmentPayload, EventFields, EventType } from '../../events/catalog.js';
import { DAY_MS, HOUR_MS, type Clock } from '../../lib/clock.js';
import { newId, randomToken } from '../../lib/ids.js';
import {
  assertReadable,
  assertWritableBy,
  plausibleId,
  findConversationAccess,
} from '../conversations/index.js';
import {
  checkStoredType,
  isAllowedAttachmentType,
  normalizeType,
  MAX_INPUT_PIXELS,
  type BlobStore,
  type StagedBlob,
  type FileStorage,
} from '../files/index.js';
import type { MessageRemoval } from '../messages/index.js';

import {
  attachmentsOfMessages,
  attachToMessage,
  countOnMessage,
  deleteAttachmentRow,
  deleteForMessages,
  deleteForUploader,
  deleteForWorkspace,
  deleteOnRemovedMessages,
  deleteUnfinalizedBefore,
  findAttachment,
  findMessageForAttaching,
  insertAttachment,
  recordUpload,
  referencedBlobs,
} from './queries.js';

/** Contract (Other constants): an attachment's file is at most 25 MiB. */
export const ATTACHMENT_MAX_BYTES = 25 * 1024 * 1024;
/** An upload token works for an hour after createAttachment. */
export const UPLOAD_TOKEN_TTL_MS = HOUR_MS;
/** An attachment not finalized within a day of its creation is removed by the expiry job. */
export const UNFINALIZED_TTL_MS = DAY_MS;
/** At most this many attachments on one message (Slack allows 10 files per message too). */
export const MAX_ATTACHMENTS_PER_MESSAGE = 10;
/** A file name is at most this many characters. */
export const FILE_NAME_MAX_CHARS = 255;

const ENCRYPTED_TYPE = 'application/octet-stream';

/** An upload whose bytes are not a type attachments take, or not the declared one (415). */
export class AttachmentTypeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AttachmentTypeError';
  }
}

export interface AttachmentServiceDeps {
  db: Db;
  config: Config;
  clock: Clock;
  log: Logger;
  files: FileStorage;
  /** Publishes an event about a message to its conversation's audience (the messages area). */
  announce: <K extends EventType>(
    tx: Tx,
    conversationId: string,
    type: K,
    at: number,
    fields: EventFields[K],
  ) => Promise<void>;
}

/** An attachment as `Message.attachments` and `MessageAttachmentAdded` show it. */
export function attachmentPayload(row: AttachmentTable): AttachmentPayload {
  return {
    id: row.id,
    fileName: row.fileName,
    contentType: row.contentType ?? 'application/octet-stream',
    sizeBytes: Number(row.sizeBytes ?? 0),
    width: row.width,
    height: row.height,
    url: `/api/attachments/${row.id}/download`,
  };
}

/** What a download serves: the blob, and how it is named and typed to the client. */
export interface AttachmentDownload {
  sha256: string;
  sizeBytes: number;
  contentType: string;
  fileName: string;
}

/**
 * An upload the caller may make (`authorizeUpload`), as the upload route holds it between the
 * steps of one request: the attachment it fills and the type declared at its creation.
 */
export interface AuthorizedUpload {
  attachmentId: string;
  /** The type declared when the attachment was created; null: the file part's type. */
  declaredType: string | null;
}

/** An upload's file in the blob store, checked, not yet recorded on its attachment. */
export interface StoredUpload {
  sha256: string;
  sizeBytes: number;
  contentType: string;
  width: number | null;
  height: number | null;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('base64url');

/**
 * Attachments (docs/files.md, "Attachments"): created with a single-use upload token, filled by
 * `POST /api/files/upload`, attached to one of the caller's messages by `finalize`, listed on
 * messages, downloaded by the conversation's members. Rows name their blob by sha256; the blob
 * sweep removes a blob once no row names it. Message removal, workspace deletion and the account
 * purge remove the rows inside their own transactions (hooks registered in context.ts).
 */
export class AttachmentService {
  constructor(private readonly deps: AttachmentServiceDeps) {}

  private get kysely() {
    return this.deps.db.kysely;
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  /** A new attachment in a conversation the caller may write in, and its upload token. */
  async create(
    actor: Actor,
    input: { conversationId: unknown; fileName: unknown; contentType?: unknown },
  ): Promise<{ attachmentId: string; uploadToken: string }> {
    const accountId = this.caller(actor);
    const fileName = checkFileName(input.fileName);
    if (!plausibleId(input.conversationId)) throw notFound('conversation');
    const row = await findConversationAccess(this.kysely, input.conversationId, accountId);
    const access = assertWritableBy(row, this.now());
    const encrypted = access.row.encrypted === 1;
    let contentType: string | null = null;
    if (input.contentType !== undefined && input.contentType !== null) {
      if (typeof input.contentType !== 'string') throw validation('contentType must be a string');
      contentType = normalizeType(input.contentType);
      if (contentType === null || !isAllowedAttachmentType(contentType)) {
        throw validation(`files of type ${input.contentType} are not accepted as attachments`);
      }
      if (contentType === ENCRYPTED_TYPE && !encrypted) {
        throw validation(
          'application/octet-stream is only for encrypted conversations; give the file its type',
        );
      }
    }
    // An encrypted conversation's blob is ciphertext: the server cannot check it, and serves it
    // as application/octet-stream whatever the client declares.
    if (encrypted) contentType = ENCRYPTED_TYPE;
    const now = this.now();
    const uploadToken = randomToken();
    const id = newId();
    await insertAttachment(this.kysely, {
      id,
      conversationId: access.row.id,
      workspaceId: access.row.workspaceId,
      uploaderId: accountId,
      fileName,
      contentType,
      uploadTokenHash: hashToken(uploadToken),
      uploadExpiresAt: now + UPLOAD_TOKEN_TTL_MS,
      sha256: null,
      sizeBytes: null,
      width: null,
      height: null,
      uploadedAt: null,
      messageId: null,
      finalizedAt: null,
      createdAt: now,
    });
    return { attachmentId: id, uploadToken };
  }

  /**
   * Checks an upload's token before a byte is stored: FORBIDDEN unless it is the token of this
   * attachment, issued to the caller, and not expired; CONFLICT once used.
   */
  async authorizeUpload(
    actor: Actor,
    input: { attachmentId: unknown; uploadToken: unknown },
  ): Promise<AuthorizedUpload> {
    const accountId = this.caller(actor);
    if (typeof input.uploadToken !== 'string' || input.uploadToken === '') {
      throw validation('the upload_token field is missing');
    }
    if (typeof input.attachmentId !== 'string' || input.attachmentId === '') {
      throw validation('the attachment_id field is missing');
    }
    const refused = forbidden('the upload token is not valid for this attachment');
    if (!plausibleId(input.attachmentId)) throw refused;
    const row = await findAttachment(this.kysely, input.attachmentId);
    if (
      !row ||
      row.uploaderId !== accountId ||
      row.uploadTokenHash !== hashToken(input.uploadToken)
    ) {
      throw refused;
    }
    if (row.uploadedAt !== null) throw conflict('this upload token was already used');
    if (row.uploadExpiresAt <= this.now()) {
      throw forbidden('the upload token has expired; create the attachment again');
    }
    return { attachmentId: row.id, declaredType: row.contentType };
  }

  /**
   * The type an authorized upload is stored as, checked before its bytes: the type declared at
   * creation wins over the part's (AttachmentTypeError for a type attachments do not take).
   */
  uploadType(upload: AuthorizedUpload, partType: string): string {
    const declared = upload.declaredType ?? partType;
    const type = normalizeType(declared);
    if (type === null || !isAllowedAttachmentType(type)) {
      throw new AttachmentTypeError(`files of type ${declared} are not accepted as attachments`);
    }
    if (type === ENCRYPTED_TYPE && upload.declaredType !== ENCRYPTED_TYPE) {
      throw new AttachmentTypeError(
        'application/octet-stream is only for encrypted conversations; give the file its type',
      );
    }
    return type;
  }

  /**
   * Streams an upload's file into the blob store's temporary folder, not yet a blob
   * (BlobTooLargeError past 25 MiB, at once). The route stages a file that arrives before the
   * fields that authorize it, and discards it when they do not come or are wrong.
   */
  async stageUpload(stream: AsyncIterable<Uint8Array>): Promise<StagedBlob> {
    assertFeature(this.deps.config, 'attachments');
    return this.deps.files.blobs.stage(stream, { maxBytes: ATTACHMENT_MAX_BYTES });
  }

  /**
   * Stores the staged file of an authorized upload: its bytes checked against the type
   * (`uploadType`; AttachmentTypeError), committed as a blob, an image's size read. Nothing is
   * recorded until `completeUpload`, so a request refused after its file (a second file) changes
   * nothing. The caller discards the staged file whatever happens (a no-op once committed).
   */
  async storeUpload(
    actor: Actor,
    upload: AuthorizedUpload,
    file: { staged: StagedBlob; partType: string },
  ): Promise<StoredUpload> {
    actingAccountId(actor);
    const type = this.uploadType(upload, file.partType);
    return storeAttachmentBlob(this.deps.files.blobs, file.staged, type);
  }

  /** Records a stored upload and spends its token; CONFLICT when another upload spent it first. */
  async completeUpload(
    actor: Actor,
    upload: AuthorizedUpload,
    uploadToken: string,
    stored: StoredUpload,
  ): Promise<{ sizeBytes: number }> {
    actingAccountId(actor);
    const done = await recordUpload(this.kysely, upload.attachmentId, hashToken(uploadToken), {
      ...stored,
      at: this.now(),
    });
    if (!done) throw conflict('this upload token was already used');
    return { sizeBytes: stored.sizeBytes };
  }

  /**
   * Attaches an uploaded attachment to a message the caller wrote in the same conversation.
   * Finalizing it again on the same message changes nothing; on another, CONFLICT.
   */
  async finalize(
    actor: Actor,
    input: { attachmentId: unknown; messageId: unknown },
  ): Promise<AttachmentPayload> {
    const accountId = this.caller(actor);
    const row = await this.own(accountId, input.attachmentId);
    if (row.uploadedAt === null) throw validation('upload the file before finalizing it');
    if (!plausibleId(input.messageId)) throw notFound('message');
    const messageId = input.messageId;
    if (row.messageId === messageId) return attachmentPayload(row);
    if (row.messageId !== null) throw conflict('this attachment is already on another message');
    return this.deps.db.transaction(async (tx) => {
      const message = await findMessageForAttaching(tx.db, messageId);
      const access = message
        ? await findConversationAccess(tx.db, message.conversationId, accountId)
        : undefined;
      if (!message || !access) throw notFound('message');
      assertWritableBy(access, this.now());
      if (message.authorId !== accountId || message.deletedAt !== null) {
        throw validation('attach files only to a message of your own that is not deleted');
      }
      if (message.conversationId !== row.conversationId) {
        throw validation('the attachment was created for another conversation');
      }
      if ((await countOnMessage(tx.db, messageId)) >= MAX_ATTACHMENTS_PER_MESSAGE) {
        throw validation(`a message has at most ${MAX_ATTACHMENTS_PER_MESSAGE} attachments`, {
          limit: MAX_ATTACHMENTS_PER_MESSAGE,
        });
      }
      const at = this.now();
      if (!(await attachToMessage(tx.db, row.id, messageId, at))) {
        throw conflict('this attachment was finalized or deleted meanwhile');
      }
      const finalized = attachmentPayload({ ...row, messageId, finalizedAt: at });
      // Readers who have the message open learn of the file without reloading it.
      await this.deps.announce(tx, message.conversationId, 'MessageAttachmentAdded', at, {
        messageId,
        attachment: finalized,
      });
      return finalized;
    });
  }

  /**
   * Checks, before a message is sent with them (sendMessage's `attachmentIds`), that each file
   * can go on it: at most 10, the caller's own, uploaded, not on a message yet, created for
   * `conversationId`. Answers the distinct ids in the order given.
   */
  async checkAttachable(
    actor: Actor,
    attachmentIds: readonly unknown[],
    conversationId: unknown,
  ): Promise<string[]> {
    const accountId = this.caller(actor);
    const ids = [...new Set(attachmentIds)];
    if (ids.length > MAX_ATTACHMENTS_PER_MESSAGE) {
      throw validation(`a message has at most ${MAX_ATTACHMENTS_PER_MESSAGE} attachments`, {
        limit: MAX_ATTACHMENTS_PER_MESSAGE,
      });
    }
    const out: string[] = [];
    for (const id of ids) {
      const row = await this.own(accountId, id);
      if (row.uploadedAt === null) throw validation('upload the file before sending it');
      if (row.messageId !== null) throw conflict('this attachment is already on another message');
      if (row.conversationId !== conversationId) {
        throw validation('the attachment was created for another conversation');
      }
      out.push(row.id);
    }
    return out;
  }

  /** Removes one of the caller's attachments, finalized or not (its message stays). */
  async delete(actor: Actor, attachmentId: unknown): Promise<boolean> {
    const row = await this.own(this.caller(actor), attachmentId);
    return deleteAttachmentRow(this.kysely, row.id);
  }

  /**
   * What `GET /api/attachments/{id}/download` serves, for a member of the conversation (and
   * before finalizing, for the uploader only); NOT_FOUND for anyone else, as for no attachment.
   */
  async download(actor: Actor, attachmentId: unknown): Promise<AttachmentDownload> {
    const accountId = this.caller(actor);
    if (!plausibleId(attachmentId)) throw notFound('attachment');
    const row = await findAttachment(this.kysely, attachmentId);
    if (!row || row.sha256 === null || row.sizeBytes === null) throw notFound('attachment');
    if (row.messageId === null && row.uploaderId !== accountId) throw notFound('attachment');
    if (row.messageId !== null) {
      const message = await findMessageForAttaching(this.kysely, row.messageId);
      if (!message || message.deletedAt !== null) throw notFound('attachment');
    }
    const conv = await findConversationAccess(this.kysely, row.conversationId, accountId);
    let member = false;
    try {
      member = assertReadable(conv, this.now()).isMember;
    } catch {
      member = false;
    }
    if (!member || !conv) throw notFound('attachment');
    if (conv.encrypted === 1) {
      return {
        sha256: row.sha256,
        sizeBytes: row.sizeBytes,
        contentType: ENCRYPTED_TYPE,
        fileName: 'encrypted.bin',
      };
    }
    return {
      sha256: row.sha256,
      sizeBytes: row.sizeBytes,
      contentType: row.contentType ?? ENCRYPTED_TYPE,
      fileName: row.fileName,
    };
  }

  /**
   * The attachments of messages the caller already sees (Message.attachments' loader). Listed
   * whether or not the feature is on (contract: Optional instance features, rule 3).
   */
  async ofMessages(
    actor: Actor,
    messageIds: readonly string[],
  ): Promise<(AttachmentPayload & { messageId: string | null })[]> {
    actingAccountId(actor);
    return (await attachmentsOfMessages(this.kysely, messageIds)).map((row) => ({
      ...attachmentPayload(row),
      messageId: row.messageId,
    }));
  }

  /**
   * Removes attachments never finalized a day after their creation, and any a finalize left on
   * a message removed at the same moment; returns how many. Does
   * nothing while the feature is off, since switching it off deletes nothing.
   */
  async expireUnfinalized(): Promise<number> {
    if (!this.featureOn()) return 0;
    const removed =
      (await deleteUnfinalizedBefore(this.kysely, this.now() - UNFINALIZED_TTL_MS)) +
      (await deleteOnRemovedMessages(this.kysely));
    if (removed > 0)
      this.deps.log.info({ attachments: removed }, 'unfinalized attachments expired');
    return removed;
  }

  /** Message removal hook: the removed messages' attachments go with them. */
  async onMessagesRemoved(tx: Tx, removal: MessageRemoval): Promise<void> {
    await deleteForMessages(
      tx.db,
      removal.messages.map((m) => m.id),
    );
  }

  /** Workspace deletion hook: every attachment of its conversations. */
  async onWorkspaceDeleted(tx: Tx, workspaceId: string): Promise<void> {
    await deleteForWorkspace(tx.db, workspaceId);
  }

  /** Account purge step: every attachment the account uploaded ("files" of the account). */
  async onAccountPurged(tx: Tx, accountId: string): Promise<void> {
    await deleteForUploader(tx.db, accountId);
  }

  /** Blob reference source: the names among `names` that some attachment uses. */
  referencedBlobs(names: string[]): Promise<string[]> {
    return referencedBlobs(this.kysely, names);
  }

  private featureOn(): boolean {
    try {
      assertFeature(this.deps.config, 'attachments');
      return true;
    } catch {
      return false;
    }
  }

  /** The account a call acts for, once the feature is known to be on (FEATURE_DISABLED first). */
  private caller(actor: Actor): string {
    assertFeature(this.deps.config, 'attachments');
    return actingAccountId(actor);
  }

  /** The caller's own attachment; NOT_FOUND for any other. */
  private async own(accountId: string, attachmentId: unknown): Promise<AttachmentTable> {
    if (!plausibleId(attachmentId)) throw notFound('attachment');
    const row = await findAttachment(this.kysely, attachmentId);
    if (!row || row.uploaderId !== accountId) throw notFound('attachment');
    return row;
  }
}

/** A file name as given, trimmed: 1 to 255 characters, no control characters, no slashes. */
export function checkFileName(value: unknown): string {
  if (typeof value !== 'string') throw validation('fileName must be a string');
  const name = value.trim().normalize('NFC');
  if (name === '') throw validation('fileName must not be empty');
  if ([...name].length > FILE_NAME_MAX_CHARS) {
    throw validation(`fileName is at most ${FILE_NAME_MAX_CHARS} characters`);
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f/\\]/.test(name)) {
    throw validation('fileName must not contain control characters or slashes');
  }
  if (name === '.' || name === '..') throw validation('fileName must name a file');
  return name;
}

/**
 * The checks every attachment's bytes go through before they are stored (uploads and imports
 * alike): not empty (VALIDATION), bytes of the type (`checkStoredType`; AttachmentTypeError).
 * Answers the type the file is stored as.
 */
export async function checkAttachmentFile(staged: StagedBlob, type: string): Promise<string> {
  if (staged.sizeBytes === 0) throw validation('the file is empty');
  const check = await checkStoredType(staged.path, type);
  if (!check.ok) throw new AttachmentTypeError(check.reason);
  return check.contentType;
}

/**
 * Commits a staged attachment file after `checkAttachmentFile`, its pixel size read when it is
 * an image. A refused file stays staged for the caller to discard.
 */
export async function storeAttachmentBlob(
  blobs: BlobStore,
  staged: StagedBlob,
  type: string,
): Promise<StoredUpload> {
  const contentType = await checkAttachmentFile(staged, type);
  // A refused or unused blob is named by no row, so the blob sweep removes it later.
  const blob = await staged.commit();
  const file = blobs.pathOf(blob.sha256);
  const dims = contentType.startsWith('image/') ? await imageSize(file) : null;
  return {
    sha256: blob.sha256,
    sizeBytes: blob.sizeBytes,
    contentType,
    width: dims?.width ?? null,
    height: dims?.height ?? null,
  };
}

/** An image's pixel size from its header, or null when it cannot be read. */
async function imageSize(file: string): Promise<{ width: number; height: number } | null> {
  try {
    const meta = await sharp(file, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
    if (!meta.width || !meta.height) return null;
    // pageHeight: an animated image's frames are stacked in `height`.
    return { width: meta.width, height: meta.pageHeight ?? meta.height };
  } catch {
    return null;
  }
}
