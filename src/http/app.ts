import cookie from '@fastify/cookie';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';

import type { AppContext } from '../context.js';
import { newId } from '../lib/ids.js';

import { fastifyErrorHandler } from './errors.js';
import { registerAddressRateLimit } from './plugins/rate-limit.js';
import { registerDenyList } from './plugins/deny-list.js';
import { registerOriginCheck } from './plugins/origin.js';
import { registerRequestContext } from './plugins/request-context.js';
import { registerSessionReader } from './plugins/session.js';
import { registerDiscovery } from './routes/discovery.js';
import { registerGraphiql } from './routes/graphiql.js';
import { registerGraphqlRoute } from './routes/graphql.js';
import { registerProbes } from './routes/probes.js';
import { registerSdl } from './routes/sdl.js';
import './request-state.js';

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Builds the Fastify app with every hook in contract order (request id and client address,
 * deny list, per-address limit, origin, session) and every route. Does not listen: main.ts does,
 * and tests use inject().
 */
export async function buildHttpApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log.child({ subsystem: 'http' }) as FastifyBaseLogger,
    requestIdHeader: false,
    logController: new LogController({
      requestIdLogLabel: 'request_id',
      disableRequestLogging: true,
    }),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : newId();
    },
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });
  app.setErrorHandler(fastifyErrorHandler);
  await app.register(cookie);

  registerRequestContext(app, ctx.config);
  registerDenyList(app, ctx.services.ipBlocks);
  ctx.limiters.addresses = registerAddressRateLimit(app, ctx.config);
  registerOriginCheck(app, ctx.config);
  registerSessionReader(app, ctx.services.sessions);

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { route, method: request.method, status: String(reply.statusCode) };
    ctx.metrics.httpRequests.inc(labels);
    ctx.metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    request.log.info(
      {
        method: request.method,
        url: request.url.split('?')[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });

  registerProbes(app, ctx);
  registerDiscovery(app, ctx);
  registerSdl(app, ctx);
  registerGraphqlRoute(app, ctx);
  registerGraphiql(app, ctx);
  app.setNotFoundHandler(async (request, reply) =>
    reply.code(404).send({
      error: 'not_found',
      message: `no route ${request.method} ${(request.url.split('?')[0] ?? '').slice(0, 200)}`,
    }),
  );
  return app;
}
