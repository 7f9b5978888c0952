import type { Readable } from 'node:stream';

import type { FastifyReply, FastifyRequest } from 'fastify';

import { userActor } from '../../auth/actor.js';
import type { AppContext } from '../../context.js';
import { validation } from '../../errors.js';
import { BlobTooLargeError } from '../../services/files/index.js';
import {
  BundleRefusal,
  BUNDLE_MAX_BYTES,
  BUNDLE_MEDIA_TYPE,
} from '../../services/plugins/index.js';
import { RouteError, sendError } from '../errors.js';
import type { ApiRoutes } from '../trees/api.js';

type Params = { serverId: string; sha256: string };

const tooLarge = () => new RouteError(413, `the bundle is larger than ${BUNDLE_MAX_BYTES} bytes`);

/** Whether the request's Content-Type is the bundle's (parameters such as charset allowed). */
function isBundleType(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && type.split(';')[0]!.trim().toLowerCase() === BUNDLE_MEDIA_TYPE;
}

/**
 * `POST /api/plugin-bundles/{server_id}` and `GET /api/plugin-bundles/{server_id}/{sha256}`
 * (contract: File routes; docs/plugins.md, "Upload and download").
 */
export const registerPluginBundleRoutes: ApiRoutes = (api, ctx, guards) => {
  // The body reaches the handler unread, as the request stream: the blob store reads it and
  // stops at the first byte past 8 MiB.
  api.addContentTypeParser(BUNDLE_MEDIA_TYPE, (_request, payload, done) => done(null, payload));

  api.post<{ Params: Pick<Params, 'serverId'> }>(
    '/plugin-bundles/:serverId',
    {
      // Another body type is refused before the body is read (no parser runs on it).
      preParsing: async (request, _reply, payload) => {
        if (!isBundleType(request)) {
          throw new RouteError(415, `send the bundle itself as ${BUNDLE_MEDIA_TYPE}`);
        }
        const declared = Number(request.headers['content-length']);
        if (Number.isFinite(declared) && declared > BUNDLE_MAX_BYTES) throw tooLarge();
        return payload;
      },
      preHandler: [guards.session, guards.csrf, guards.feature('workspace_plugins')],
    },
    async (request, reply) => {
      try {
        const plugins = ctx.services.plugins;
        const actor = userActor(request.svc.session!);
        const workspaceId = await plugins.authorizeUpload(actor, request.params.serverId);
        const stored = await plugins.storeBundle(actor, workspaceId, keepOpen(request.body));
        return reply
          .code(stored.created ? 201 : 200)
          .send({ sha256: stored.sha256, size: stored.size, url: stored.url });
      } catch (err) {
        // What the client still sends is read and dropped after the answer (lingering-close.ts).
        return sendError(reply, uploadError(err));
      }
    },
  );

  api.get<{ Params: Params }>(
    '/plugin-bundles/:serverId/:sha256',
    { preHandler: [guards.session, guards.feature('workspace_plugins')] },
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
 * The body's chunks for a reader that may stop early (the blob store at the first byte past
 * 8 MiB) without destroying the request: a destroyed request takes its socket with it, and the
 * answer could not be followed by the lingering close (http/lingering-close.ts).
 */
function keepOpen(body: unknown): AsyncIterable<Uint8Array> {
  const stream = body as Readable;
  return { [Symbol.asyncIterator]: () => stream.iterator({ destroyOnReturn: false }) };
}

function uploadError(err: unknown): unknown {
  if (err instanceof BlobTooLargeError) return tooLarge();
  if (err instanceof BundleRefusal) return new RouteError(422, err.message);
  const code = (err as { code?: unknown }).code;
  if (code === 'ECONNRESET' || (err instanceof Error && err.message === 'aborted')) {
    return validation('the request ended before the bundle was complete');
  }
  return err;
}

async function download(
  ctx: AppContext,
  request: FastifyRequest<{ Params: Params }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const actor = userActor(request.svc.session!);
  const { serverId, sha256 } = request.params;
  const bundle = await ctx.services.plugins.bundleForDownload(actor, serverId, sha256);
  const etag = `"${bundle.sha256}"`;
  reply
    .header('content-type', BUNDLE_MEDIA_TYPE)
    .header('cache-control', 'private, max-age=31536000, immutable')
    .header('x-content-type-options', 'nosniff')
    .header('etag', etag);
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch && ifNoneMatch.split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
    return reply.code(304).send();
  }
  return reply
    .header('content-length', String(bundle.sizeBytes))
    .send(ctx.services.files.blobs.open(bundle.sha256));
}
