import type { MultipartFile } from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { userActor } from '../../auth/actor.js';
import type { AppContext } from '../../context.js';
import { AppError, validation } from '../../errors.js';
import {
  ATTACHMENT_MAX_BYTES,
  AttachmentTypeError,
  type StoredUpload,
} from '../../services/attachments/attachment-service.js';
import { BlobTooLargeError } from '../../services/files/blob-store.js';
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
 * `POST /api/files/upload` and `GET /api/attachments/{id}/download` (contract: File routes;
 * docs/files.md, "Attachments").
 */
export const registerAttachmentRoutes: ApiRoutes = (api, ctx, guards) => {
  api.post(
    '/files/upload',
    { preHandler: [guards.session, guards.csrf, guards.feature('attachments')] },
    async (request, reply) => {
      try {
        return reply.send(await upload(ctx, request));
      } catch (err) {
        // Whatever the client is still sending is not read: close once the answer is out.
        if (!request.raw.complete) reply.header('connection', 'close');
        return sendError(reply, uploadError(err));
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
 * Reads the form part by part: the text fields must come before the file, so the token is
 * checked before a byte of the file is stored. The upload is recorded only once the body ended
 * well with exactly one file.
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
  let stored: { row: Parameters<typeof attachments.completeUpload>[1]; file: StoredUpload } | null =
    null;
  for await (const part of request.parts({ limits: UPLOAD_LIMITS })) {
    if (part.type === 'field') {
      if (part.valueTruncated || part.fieldnameTruncated) {
        throw validation(`the field ${part.fieldname.slice(0, 100)} is too long`);
      }
      if (stored === null) fields.set(part.fieldname, String(part.value));
      continue;
    }
    const file: MultipartFile = part;
    if (stored !== null) throw validation('send exactly one file');
    const row = await attachments.authorizeUpload(actor, {
      attachmentId: fields.get('attachment_id'),
      uploadToken: fields.get('upload_token'),
    });
    stored = {
      row,
      file: await attachments.storeUpload(actor, row, {
        stream: file.file,
        partType: file.mimetype,
      }),
    };
  }
  if (stored === null) {
    if (!fields.has('upload_token')) throw validation('the upload_token field is missing');
    if (!fields.has('attachment_id')) throw validation('the attachment_id field is missing');
    throw validation('no file: send one file part after upload_token and attachment_id');
  }
  const done = await attachments.completeUpload(
    actor,
    stored.row,
    fields.get('upload_token')!,
    stored.file,
  );
  return { size_bytes: done.sizeBytes };
}

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
