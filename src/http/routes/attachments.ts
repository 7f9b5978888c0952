import type { MultipartFile } from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { userActor } from '../../auth/actor.js';
import type { AppContext } from '../../context.js';
import { AppError, validation } from '../../errors.js';
import {
  ATTACHMENT_MAX_BYTES,
  AttachmentTypeError,
  type AuthorizedUpload,
} from '../../services/attachments/index.js';
import { BlobTooLargeError, type StagedBlob } from '../../services/files/index.js';
import { RouteError, sendError } from '../errors.js';
import type { ApiRoutes } from '../trees/api.js';

import { contentDisposition, parseRange } from './download-headers.js';
import { multipartLimitRefusal } from './multipart-limits.js';

/** Room for the text fields and part headers around the file in a multipart body. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

/** The multipart limits of an upload: two short text fields and one file. */
const UPLOAD_LIMITS = {
  fields: 8,
  fieldSize: 1024,
  fieldNameSize: 100,
  files: 1,
  parts: 10,
  headerPairs: 10,
  // Busboy keeps at most this much of a part's header block and drops the rest unread; a part
  // whose Content-Disposition is dropped is no file, so a 1 MiB header answers 400 "no file".
  headerSize: 16 * 1024,
  // One byte more than allowed reaches the blob store, which refuses it (413) at once.
  fileSize: ATTACHMENT_MAX_BYTES + 1,
} as const;

/**
 * `POST /api/files/upload`, `GET /api/attachments/{id}/download` and, for those handling a
 * report, `GET /api/reports/{report_id}/attachments/{blob_sha256}` (contract: File routes;
 * docs/files.md, "Attachments"; docs/e2ee.md).
 */
export const registerAttachmentRoutes: ApiRoutes = (api, ctx, guards) => {
  api.post(
    '/files/upload',
    { preHandler: [guards.session, guards.csrf, guards.feature('attachments')] },
    async (request, reply) => {
      try {
        return reply.send(await upload(ctx, request));
      } catch (err) {
        // What the client still sends is read and dropped after the answer (lingering-close.ts).
        return sendError(reply, uploadError(err));
      }
    },
  );

  api.get<{ Params: { reportId: string; sha: string } }>(
    '/reports/:reportId/attachments/:sha',
    { preHandler: [guards.session, guards.feature('attachments')] },
    async (request, reply) => {
      try {
        const actor = userActor(request.svc.session!);
        const blob = await ctx.services.moderation.reports.reportedAttachment(
          actor,
          request.params.reportId,
          request.params.sha,
        );
        const blobs = ctx.services.files.blobs;
        const size = await blobs.size(blob.sha256);
        if (size === null)
          throw new Error(`attachment blob ${blob.sha256} is missing from the store`);
        return reply
          .header('content-type', 'application/octet-stream')
          .header('content-disposition', contentDisposition('encrypted.bin'))
          .header('x-content-type-options', 'nosniff')
          .header('cache-control', 'private, no-store')
          .header('content-length', String(size))
          .send(blobs.open(blob.sha256));
      } catch (err) {
        return sendError(reply, err);
      }
    },
  );

  api.get<{ Params: { id: string } }>(
    '/attachments/:id/download',
    { preHandler: [guards.session, guards.feature('attachments')] },
    async (request, reply) => {
      try {
        return await download(ctx, request, reply);
      } catch (err) {
        return sendError(reply, err);
      }
    },
  );
};

/**
 * Reads the form part by part; the contract sets no order. When `upload_token` and
 * `attachment_id` come before the file they are checked before a byte of it is stored. A file
 * that comes first is streamed into the blob store's temporary folder (never held in memory)
 * and checked once the fields arrive; it is deleted when they do not come or are wrong. The
 * upload is recorded only once the body ended well with exactly one file.
 */
async function upload(ctx: AppContext, request: FastifyRequest): Promise<{ size_bytes: number }> {
  const attachments = ctx.services.attachments;
  const actor = userActor(request.svc.session!);
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > ATTACHMENT_MAX_BYTES + MULTIPART_OVERHEAD_BYTES) {
    throw new RouteError(413, `the file is larger than ${ATTACHMENT_MAX_BYTES} bytes`);
  }
  if (!request.isMultipart()) {
    throw new RouteError(415, 'send the file as multipart/form-data');
  }
  const fields = new Map<string, string>();
  const authorize = () =>
    attachments.authorizeUpload(actor, {
      attachmentId: fields.get('attachment_id'),
      uploadToken: fields.get('upload_token'),
    });
  const hasFields = () => fields.has('upload_token') && fields.has('attachment_id');
  let authorized: AuthorizedUpload | null = null;
  let file: { staged: StagedBlob; partType: string } | null = null;
  try {
    for await (const part of request.parts({ limits: UPLOAD_LIMITS })) {
      if (part.type === 'field') {
        if (part.valueTruncated || part.fieldnameTruncated) {
          throw validation(`the field ${part.fieldname.slice(0, 100)} is too long`);
        }
        if (FORM_FIELDS.has(part.fieldname) && fields.has(part.fieldname)) {
          throw validation(`send the ${part.fieldname} field once`);
        }
        fields.set(part.fieldname, String(part.value));
        // A file that came first is checked as soon as the fields that authorize it are in.
        if (
          file !== null &&
          authorized === null &&
          FORM_FIELDS.has(part.fieldname) &&
          hasFields()
        ) {
          authorized = await authorize();
        }
        continue;
      }
      const filePart: MultipartFile = part;
      if (file !== null) throw validation('send exactly one file');
      if (hasFields()) {
        authorized = await authorize();
        attachments.uploadType(authorized, filePart.mimetype);
      }
      file = { staged: await attachments.stageUpload(filePart.file), partType: filePart.mimetype };
    }
    if (file === null) {
      if (!fields.has('upload_token')) throw validation('the upload_token field is missing');
      if (!fields.has('attachment_id')) throw validation('the attachment_id field is missing');
      throw validation('no file: send one file part with upload_token and attachment_id');
    }
    authorized ??= await authorize();
    const stored = await attachments.storeUpload(actor, authorized, file);
    const done = await attachments.completeUpload(
      actor,
      authorized,
      fields.get('upload_token')!,
      stored,
    );
    return { size_bytes: done.sizeBytes };
  } finally {
    await file?.staged.discard();
  }
}

/** The text fields of an upload, each sent once, before or after the file. */
const FORM_FIELDS = new Set(['upload_token', 'attachment_id']);

/** The upload's failures as the contract's statuses (never a 500 for a malformed body). */
function uploadError(err: unknown): unknown {
  if (err instanceof AppError || err instanceof RouteError) return err;
  if (err instanceof BlobTooLargeError) return new RouteError(413, err.message);
  if ((err as { code?: unknown }).code === 'FST_REQ_FILE_TOO_LARGE') {
    return new RouteError(413, `the file is larger than ${ATTACHMENT_MAX_BYTES} bytes`);
  }
  if (err instanceof AttachmentTypeError) return new RouteError(415, err.message);
  const code = (err as { code?: unknown }).code;
  const refusal = multipartLimitRefusal(err, 'upload_token, attachment_id and one file');
  if (refusal) return refusal;
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') {
    return new RouteError(415, 'send the file as multipart/form-data');
  }
  const message = err instanceof Error ? err.message : '';
  if (
    /multipart|boundary|terminated early|unexpected end|malformed|part header/i.test(message) ||
    code === 'ECONNRESET' ||
    message === 'aborted'
  ) {
    return validation(`the multipart body is malformed: ${message}`);
  }
  return err;
}

/** Streams a blob with the headers that keep a browser from running it, and Range support. */
async function download(
  ctx: AppContext,
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const actor = userActor(request.svc.session!);
  const file = await ctx.services.attachments.download(actor, request.params.id);
  const blobs = ctx.services.files.blobs;
  const size = await blobs.size(file.sha256);
  if (size === null) throw new Error(`attachment blob ${file.sha256} is missing from the store`);
  const etag = `"${file.sha256}"`;
  const type = file.contentType.startsWith('text/')
    ? `${file.contentType}; charset=utf-8`
    : file.contentType;
  reply
    .header('content-type', type)
    .header('content-disposition', contentDisposition(file.fileName))
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "sandbox; default-src 'none'")
    .header('cache-control', 'private, no-cache')
    .header('accept-ranges', 'bytes')
    .header('etag', etag);
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch && ifNoneMatch.split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
    return reply.code(304).send();
  }
  const ifRange = request.headers['if-range'];
  const range =
    ifRange === undefined || ifRange === etag
      ? parseRange(request.headers.range, size)
      : { kind: 'none' as const };
  if (range.kind === 'unsatisfiable') {
    return reply
      .code(416)
      .header('content-range', `bytes */${size}`)
      .header('content-type', 'application/json; charset=utf-8')
      .send({ error: `the range is outside the file of ${size} bytes` });
  }
  if (range.kind === 'range') {
    return reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
      .header('content-length', String(range.end - range.start + 1))
      .send(blobs.open(file.sha256, { start: range.start, end: range.end }));
  }
  return reply.header('content-length', String(size)).send(blobs.open(file.sha256));
}
