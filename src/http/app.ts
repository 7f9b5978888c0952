import cookie from '@fastify/cookie';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type RouteOptions,
} from 'fastify';

import type { AppContext } from '../context.js';
import { buildGraphqlExecutor } from '../graphql/build.js';
import type { GraphqlExecutor } from '../graphql/executor.js';
import { newId } from '../lib/ids.js';
import { securityHeaders } from '../lib/security-headers.js';

import { fastifyErrorHandler } from './errors.js';
import { LINGER_LIMITS, registerLingeringClose, type LingerLimits } from './lingering-close.js';
import { registerAttachmentRoutes } from './routes/attachments.js';
import { avatarRoutes } from './routes/avatars.js';
import { dataExportRoutes } from './routes/data-exports.js';
import { registerDiscovery } from './routes/discovery.js';
import { registerGraphiql } from './routes/graphiql.js';
import { graphqlRoute } from './routes/graphql.js';
import { notificationRoutes } from './routes/notifications.js';
import { registerPluginBundleRoutes } from './routes/plugin-bundles.js';
import { registerRemoteRoutes } from './routes/remote.js';
import { federationVerifier, s2sRoutes } from './routes/s2s.js';
import { registerHealth, registerReadiness } from './routes/probes.js';
import { sdlRoute } from './routes/sdl.js';
import { registerWebClient } from './routes/web-client.js';
import { registerApiTree, type ApiRoutes } from './trees/api.js';
import { registerPublicTrees } from './trees/public.js';
import { registerS2sTree, type S2sRoutes, type S2sVerifier } from './trees/s2s.js';
import './request-state.js';

/** The routes of each tree; an area adds its registrar here. */
const apiRoutes = (graphql: GraphqlExecutor): readonly ApiRoutes[] => [
  sdlRoute(graphql),
  graphqlRoute(graphql),
  registerGraphiql,
  registerAttachmentRoutes,
  avatarRoutes,
  dataExportRoutes,
  registerPluginBundleRoutes,
  notificationRoutes,
  registerRemoteRoutes,
];

/** Routes and the s2s verifier beyond the built-in ones (tests add probes of their own). */
export interface HttpAppOptions {
  /** The GraphQL executor; default the contract's schema (main.ts shares one with WebSocket). */
  graphql?: GraphqlExecutor;
  apiRoutes?: readonly ApiRoutes[];
  s2sRoutes?: readonly S2sRoutes[];
  s2sVerifier?: S2sVerifier;
  /** Bounds of the lingering close (tests shorten them); default `LINGER_LIMITS`. */
  lingering?: Partial<LingerLimits>;
  /** Told of every route as it is added (the authorization matrix lists the served routes). */
  onRoute?: (route: RouteOptions) => void;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Builds the Fastify app as route trees, each admitting its requests first (./admission.ts):
 * /healthz; /readyz, discovery and unknown paths; /api (then the session); /s2s/v1 (raw body,
 * then the signature). Does not listen: main.ts does, and tests use inject().
 */
export async function buildHttpApp(
  ctx: AppContext,
  options: HttpAppOptions = {},
): Promise<FastifyInstance> {
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
  if (options.onRoute) app.addHook('onRoute', options.onRoute);
  app.setErrorHandler(fastifyErrorHandler);
  // Every answer, refusals and errors included, carries the security headers its route did not
  // set itself (src/lib/security-headers.ts).
  const headers = Object.entries(securityHeaders(ctx.config.server.publicBaseUrl));
  app.addHook('onSend', (_request, reply, payload, done) => {
    for (const [name, value] of headers) if (!reply.hasHeader(name)) reply.header(name, value);
    done(null, payload);
  });
  await app.register(cookie);
  app.decorateRequest('svc', null as never);
  // An answer sent before the body was read whole is followed by a lingering close.
  registerLingeringClose(app, { ...LINGER_LIMITS, ...options.lingering });

  // Background work (link previews, the notification fan-out) gives way to requests.
  app.addHook('onRequest', (request, _reply, done) => {
    ctx.requestLoad.started(request);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    ctx.requestLoad.answered(request);
    done();
  });
  // SQLite: an answer leaves only once every write committed before it is on the disk (the
  // commit itself waits for the disk off the event loop: db/sqlite/durable-commits.ts).
  app.addHook('onSend', (_request, _reply, payload, done) => {
    const durable = ctx.db.durable();
    if (!durable) return done(null, payload);
    durable.then(
      () => done(null, payload),
      (err: Error) => done(err),
    );
  });
  app.addHook('onResponse', async (request, reply) => {
    ctx.requestLoad.answered(request);
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

  registerPublicTrees(app, ctx, {
    health: registerHealth,
    public: [registerReadiness, registerDiscovery, registerWebClient],
  });
  const graphql = options.graphql ?? buildGraphqlExecutor();
  registerApiTree(app, ctx, [...apiRoutes(graphql), ...(options.apiRoutes ?? [])]);
  registerS2sTree(app, ctx, {
    verify: options.s2sVerifier ?? federationVerifier(ctx),
    // The forward route runs relayed requests through the whole app, so it gets `app` itself.
    routes: [s2sRoutes(app), ...(options.s2sRoutes ?? [])],
  });
  return app;
}
