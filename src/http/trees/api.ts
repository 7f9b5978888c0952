import multipart from '@fastify/multipart';
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';

import type { FeatureName } from '../../config/features.js';
import type { AppContext } from '../../context.js';
import { unauthenticated } from '../../errors.js';
import { sendError } from '../errors.js';
import { registerAdmission } from '../plugins/admission.js';
import { requireCsrf } from '../plugins/csrf.js';
import { registerSessionReader } from '../plugins/session.js';
import { requireFeature } from '../require-feature.js';

import { notFoundHandler } from './not-found.js';

/** Guards an /api route lists in its `preHandler`, in this order: session, csrf, feature. */
export interface ApiGuards {
  /** 401 `{"error":"sign in first"}` for a request without a live session. */
  session: preHandlerAsyncHookHandler;
  /** 403 `{"error":"csrf validation failed"}` unless the CSRF header matches the session. */
  csrf: preHandlerAsyncHookHandler;
  /** 403 with `code: FEATURE_DISABLED` and `feature` unless the feature is enabled. */
  feature(name: FeatureName): preHandlerAsyncHookHandler;
}

/** Registers routes inside the /api tree; paths are relative to /api (`''` is /api itself). */
export type ApiRoutes = (api: FastifyInstance, ctx: AppContext, guards: ApiGuards) => void;

/**
 * /api as one encapsulated tree: admission under the `api` zone (deny list, address bucket,
 * origin, CORS), then the session read from its cookie, for every route of the tree and for
 * paths under /api that match none (404 after admission, so an unknown path still counts
 * against the address and is refused for a foreign origin). A route that changes state and is
 * not GraphQL lists `guards.csrf`; GraphQL decides per operation.
 *
 *     api.post('/files/upload', { preHandler: [guards.session, guards.csrf, guards.feature('attachments')] }, ...)
 */
export function registerApiTree(
  app: FastifyInstance,
  ctx: AppContext,
  routes: readonly ApiRoutes[],
): void {
  const guards: ApiGuards = {
    session: async (request, reply) => {
      if (!request.svc.session) return sendError(reply, unauthenticated());
    },
    csrf: requireCsrf(ctx.services.sessions),
    feature: (name) => requireFeature(ctx.config, name),
  };
  void app.register(
    async (api) => {
      registerAdmission(api, ctx.admission, 'api');
      registerSessionReader(api, ctx.services.sessions);
      // Multipart for the file routes: parsing starts only when a route asks for the parts,
      // with that route's own limits (request.parts({ limits })); these are the defaults.
      await api.register(multipart, {
        limits: { fields: 10, fieldSize: 4096, files: 1, parts: 20, headerPairs: 20 },
      });
      for (const register of routes) register(api, ctx, guards);
      api.setNotFoundHandler(notFoundHandler);
    },
    { prefix: '/api' },
  );
}
