import { createReadStream } from 'node:fs';

import { userActor } from '../../auth/actor.js';
import { sendError } from '../errors.js';
import type { ApiRoutes } from '../trees/api.js';

import { contentDisposition } from './download-headers.js';

/**
 * `GET /api/data-exports/{id}/download`: the ZIP archive of a person's own data export, to that
 * person's session only (NOT_FOUND for anyone else's, or one not ready). docs/export.md.
 */
export const dataExportRoutes: ApiRoutes = (api, ctx, guards) => {
  api.get<{ Params: { id: string } }>(
    '/data-exports/:id/download',
    { preHandler: [guards.session] },
    async (request, reply) => {
      try {
        const actor = userActor(request.svc.session!);
        const file = await ctx.services.dataExports.download(actor, request.params.id);
        return reply
          .header('content-type', 'application/zip')
          .header('content-disposition', contentDisposition(file.fileName))
          .header('x-content-type-options', 'nosniff')
          .header('cache-control', 'private, no-store')
          .header('content-length', String(file.sizeBytes))
          .send(createReadStream(file.file));
      } catch (err) {
        return sendError(reply, err);
      }
    },
  );
};
