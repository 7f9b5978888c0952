import type { FastifyInstance } from 'fastify';

import type { GraphqlExecutor } from '../../graphql/executor.js';
import { printPublicSdl } from '../../graphql/load-schema.js';
import type { ApiRoutes } from '../trees/api.js';

/** GET /api/sdl: the running build's schema as text. */
export function sdlRoute(graphql: GraphqlExecutor): ApiRoutes {
  const sdl = printPublicSdl(graphql.schema);
  return (api: FastifyInstance) =>
    void api.get('/sdl', async (_request, reply) =>
      reply.type('text/plain; charset=utf-8').send(sdl),
    );
}
