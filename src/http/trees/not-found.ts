import type { FastifyReply, FastifyRequest } from 'fastify';

/** 404 JSON for a path no route of the tree matched. */
export async function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  return reply.code(404).send({
    error: 'not_found',
    message: `no route ${request.method} ${(request.url.split('?')[0] ?? '').slice(0, 200)}`,
  });
}
