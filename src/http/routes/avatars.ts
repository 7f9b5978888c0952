import type { FastifyReply, FastifyRequest } from 'fastify';

import { userActor } from '../../auth/actor.js';
import type { AppContext } from '../../context.js';
import { AppError, forbidden, validation } from '../../errors.js';
import { AVATAR_MAX_BYTES } from '../../services/accounts/index.js';
import {
  openBlobNoFollow,
  parseImagePath,
  receiveToTemp,
  UploadRefused,
  type TempUpload,
} from '../../services/files/index.js';
import { RouteError, sendError } from '../errors.js';
import type { ApiRoutes } from '../trees/api.js';

import { multipartLimitRefusal } from './multipart-limits.js';

/** Contract: images under /api/files/ are named by their content, so they never change. */
const IMMUTABLE = 'private, max-age=31536000, immutable';
const OUTSIDE_AVATARS = 'only avatars/<sha256>.<png|jpg|gif|webp> is served here';

/**
 * `POST /api/files/avatar` (session, CSRF; multipart with one file, at most 2 MiB) and
 * `GET /api/files/{path}` (any signed-in user; only `avatars/...`, 403 for anything else).
 * docs/files.md, "Avatars".
 */
export const avatarRoutes: ApiRoutes = (api, ctx, guards) => {
  api.post(
    '/files/avatar',
    { preHandler: [guards.session, guards.csrf] },
    async (request, reply) => {
      let upload: TempUpload | null = null;
      try {
        const received = await readOneFile(request, ctx, AVATAR_MAX_BYTES);
        upload = received.upload;
        const actor = userActor(request.svc.session!);
        return await ctx.services.avatars.set(actor, upload.file, received.mimetype);
      } catch (err) {
        // The temporary file goes before the answer does.
        await upload?.remove();
        return sendUploadError(reply, err);
      } finally {
        await upload?.remove();
      }
    },
  );

  api.get('/files/*', { preHandler: [guards.session] }, async (request, reply) => {
    // The path as sent, never decoded: only the strict form names an image; every other text
    // (encoded, double-encoded, `..`, backslash, NUL, absolute) is refused without a lookup.
    const raw = request.url.slice('/api/files/'.length).split('?')[0]!;
    const image = parseImagePath(raw);
    if (!image) return sendError(reply, forbidden(OUTSIDE_AVATARS));
    let served: boolean;
    try {
      // An emoji's image is refused (FEATURE_DISABLED) while custom_emoji is off.
      served =
        (await ctx.services.avatars.isServed(image.path)) ||
        (await ctx.services.emoji.isServed(image.path));
    } catch (err) {
      return sendError(reply, err);
    }
    const blob = served ? await openBlobNoFollow(ctx.services.files.blobs, image.sha256) : null;
    if (!blob) return reply.code(404).send({ error: 'image not found' });
    return reply
      .header('content-type', image.contentType)
      .header('content-length', String(blob.sizeBytes))
      .header('cache-control', IMMUTABLE)
      .header('etag', `"${image.sha256}"`)
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .send(blob.stream);
  });
};

/**
 * Reads a multipart body that must hold exactly one file, streaming it to a temporary file and
 * refusing it (413) as soon as it passes `maxBytes`. Text fields are ignored; their number and
 * size are capped so a flood of them is refused too.
 */
export async function readOneFile(
  request: FastifyRequest,
  ctx: AppContext,
  maxBytes: number,
): Promise<{ upload: TempUpload; mimetype: string }> {
  if (!request.isMultipart()) {
    throw new RouteError(415, 'send the file as multipart/form-data');
  }
  let found: { upload: TempUpload; mimetype: string } | null = null;
  try {
    const parts = request.parts({
      // One byte more than allowed reaches receiveToTemp, which refuses it at once.
      limits: { fileSize: maxBytes + 1, files: 2, fields: 20, fieldSize: 4096, parts: 22 },
    });
    for await (const part of parts) {
      if (part.type !== 'file') continue;
      if (found) throw validation('send exactly one file');
      found = {
        upload: await receiveToTemp(ctx.services.files.blobs, part.file, maxBytes),
        mimetype: part.mimetype,
      };
    }
  } catch (err) {
    await found?.upload.remove();
    throw err;
  }
  if (!found) throw validation('send one file (no file part was found)');
  return found;
}

/** Answers a failed upload: the route's refusals, a malformed or wrongly shaped form as 400. */
export function sendUploadError(reply: FastifyReply, err: unknown): FastifyReply {
  if (err instanceof RouteError || err instanceof AppError) return sendError(reply, err);
  if (err instanceof UploadRefused) {
    if (err.status === 400) return sendError(reply, validation(err.message));
    // The rest of an over-long body is read and dropped after the answer (lingering-close.ts).
    return sendError(reply, new RouteError(err.status, err.message));
  }
  const refusal = multipartLimitRefusal(err, 'one image file');
  if (refusal) return sendError(reply, refusal);
  const e = err as { code?: unknown; statusCode?: unknown; message?: unknown };
  if (typeof e.code === 'string' && e.code.startsWith('FST_') && typeof e.statusCode === 'number') {
    if (e.statusCode >= 400 && e.statusCode < 500) {
      return sendError(reply, validation(`malformed multipart body: ${String(e.message)}`));
    }
  }
  if (
    err instanceof Error &&
    /multipart|boundary|terminated early|unexpected end/i.test(err.message)
  ) {
    return sendError(reply, validation(`malformed multipart body: ${err.message}`));
  }
  return sendError(reply, err);
}
