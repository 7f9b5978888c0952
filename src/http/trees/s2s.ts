import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { AppContext } from '../../context.js';
import { unauthenticated } from '../../errors.js';
import { registerAdmission } from '../plugins/admission.js';

import { notFoundHandler } from './not-found.js';

/** Where the server-to-server API lives (contract: Versioning). */
export const S2S_PREFIX = '/s2s/v1';

/** Largest body a peer may send (the relay's own limit; a signed body is read whole). */
export const S2S_BODY_LIMIT = 32 * 1024 * 1024;

/**
 * Checks a peer's RFC 9421 signature before any /s2s handler runs; throws an AppError to
 * refuse (the peer sees a generic refusal, the log keeps the reason). `request.body` is the raw
 * body as received, for the content digest. The verifier records the peer on the request for
 * the handler.
 */
export type S2sVerifier = (request: FastifyRequest) => Promise<void>;

/** Until a verifier is configured, no peer is accepted. */
export const refuseUnverified: S2sVerifier = async () => {
  throw unauthenticated('this server does not accept server-to-server calls yet');
};

/** Registers routes inside the /s2s/v1 tree; paths are relative to it. */
export type S2sRoutes = (s2s: FastifyInstance, ctx: AppContext) => void;

/**
 * /s2s/v1 as one encapsulated tree: no origin check, no session, no per-address limit (the deny
 * list still applies); bodies are kept raw (a Buffer, whatever the content type) so the
 * signature's digest covers the exact bytes; the verifier runs as the tree's first preHandler,
 * so no handler ever sees an unverified call. A path no route matches is a 404 unverified.
 */
export function registerS2sTree(
  app: FastifyInstance,
  ctx: AppContext,
  options: { verify: S2sVerifier; routes: readonly S2sRoutes[] },
): void {
  void app.register(
    async (s2s) => {
      registerAdmission(s2s, ctx.admission, 's2s');
      s2s.removeAllContentTypeParsers();
      s2s.addContentTypeParser(
        '*',
        { parseAs: 'buffer', bodyLimit: S2S_BODY_LIMIT },
        (_request, body, done) => done(null, body),
      );
      s2s.addHook('preHandler', async (request) => {
        if (request.is404) return;
        await options.verify(request);
      });
      for (const register of options.routes) register(s2s, ctx);
      s2s.setNotFoundHandler(notFoundHandler);
    },
    { prefix: S2S_PREFIX },
  );
}
