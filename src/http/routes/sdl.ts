import type { FastifyInstance } from 'fastify';

import type { AppContext } from '../../context.js';
import { printPublicSdl } from '../../graphql/load-schema.js';

/** GET /api/sdl: the running build's schema as text. */
export function registerSdl(api: FastifyInstance, ctx: AppContext): void {
  const sdl = printPublicSdl(ctx.graphql.schema);
  api.get('/sdl', async (_request, reply) => reply.type('text/plain; charset=utf-8').send(sdl));
}
