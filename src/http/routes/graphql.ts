import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OperationTypeNode } from 'graphql';

import { needsCsrf, type CsrfRequest } from '../../auth/csrf.js';
import type { AppContext } from '../../context.js';
import {
  DEPENDENCY_RETRY_AFTER_SECONDS,
  dependencyError,
  logDependencyFailure,
  rateLimited,
} from '../../errors.js';
import type { GraphqlContext } from '../../graphql/context.js';
import {
  GraphqlExecutor,
  type FormattedResult,
  type GraphqlRequest,
} from '../../graphql/executor.js';
import { parseBounded } from '../../graphql/document-limits.js';
import { codedError, plainError } from '../../graphql/format-error.js';
import { selectOperation } from '../../lib/graphql-operation.js';
import { Lru } from '../../lib/lru.js';
import { firstHeader } from '../../lib/headers.js';
import { conversationNamed } from '../../services/conversations/index.js';
import { httpCookieJar } from '../cookies.js';
import { fastifyErrorHandler } from '../errors.js';
import { csrfAccepted, CSRF_REFUSAL } from '../plugins/csrf.js';
import { readSession } from '../plugins/session.js';
import type { ApiRoutes } from '../trees/api.js';

import { graphiqlPage } from './graphiql.js';

const CSRF_CACHE_MAX_SOURCE = 20_000;

/** Largest accepted body on POST /api. */
export const API_BODY_LIMIT = 1024 * 1024;

const ROUTE_OPTIONS = {
  bodyLimit: API_BODY_LIMIT,
  errorHandler: dependencyErrorHandler,
  // Read in `respond`, with the conversation the request names.
  config: { readsSessionItself: true },
};

type Item = { ok: true; request: GraphqlRequest } | { ok: false; error: string };

/**
 * POST /api (one GraphQL request or a batch) and GET /api (one query as URL parameters), with
 * every pre-execution rule of the contract.
 */
export function graphqlRoute(graphql: GraphqlExecutor): ApiRoutes {
  return (api, ctx) => registerGraphqlRoute(api, ctx, graphql);
}

function registerGraphqlRoute(
  api: FastifyInstance,
  ctx: AppContext,
  graphql: GraphqlExecutor,
): void {
  // Classifying a document parses it; clients repeat the same few documents, so the answer is
  // kept per (document, operation name, cookie present).
  const csrfCache = new Lru<string, boolean>(1000);
  const csrfCheck = (reqs: CsrfRequest[], hasCookie: boolean) =>
    reqs.some((r) => {
      if (typeof r?.query !== 'string' || r.query.length > CSRF_CACHE_MAX_SOURCE) {
        return needsCsrf(r, hasCookie);
      }
      const key = `${hasCookie ? 1 : 0}:${typeof r.operationName === 'string' ? r.operationName : typeof r.operationName}:${r.query}`;
      let needed = csrfCache.get(key);
      if (needed === undefined) {
        needed = needsCsrf(r, hasCookie);
        csrfCache.set(key, needed);
      }
      return needed;
    });
  api.post('', ROUTE_OPTIONS, async (request, reply) => {
    // Fastify also parses text/plain; POST /api takes JSON only.
    const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') {
      return reply.code(400).send({
        error: `content type ${request.headers['content-type'] ?? '(none)'} is not accepted here; send application/json`,
      });
    }
    const body = request.body;
    const isBatch = Array.isArray(body);
    const raw: unknown[] = isBatch ? body : [body];
    if (isBatch && raw.length > ctx.config.rates.apiMaxBatch) {
      return reply.code(400).send({ error: 'batch_too_large' });
    }
    if (isBatch && raw.length === 0) {
      return reply.code(400).send({ error: 'bad_request', message: 'the batch is empty' });
    }
    if (raw.some((r) => r === null || typeof r !== 'object' || Array.isArray(r))) {
      return reply.code(400).send({
        error: 'bad_request',
        message: isBatch
          ? 'every item of a batch must be a JSON object with a "query" string'
          : 'the body must be a JSON object with a "query" string, or an array of them',
      });
    }
    return respond(request, reply, raw as Record<string, unknown>[], isBatch);
  });

  /**
   * Runs requests that passed their transport's checks (POST body or GET parameters): CSRF for
   * the whole batch, then the mutation limit, then each request. The one path of both methods.
   */
  async function respond(
    request: FastifyRequest,
    reply: FastifyReply,
    raw: Record<string, unknown>[],
    isBatch: boolean,
  ) {
    const items = raw.map((r) => readRequest(r));
    const requestId = request.id;
    const answer = (results: FormattedResult[]) => reply.send(isBatch ? results : results[0]);

    // CSRF: checked once for the whole batch, before anything runs.
    if (csrfCheck(raw as CsrfRequest[], request.svc.sessionToken !== null)) {
      if (!csrfAccepted(ctx.services.sessions, request)) {
        // Nothing runs. A request that could not have run anyway also says why, so a broken
        // or refused document is not reported as a CSRF problem alone.
        return answer(
          items.map((item) => {
            const errors = [plainError(CSRF_REFUSAL, requestId)];
            const own = item.ok ? graphql.prepare(item.request.query) : null;
            const reasons = !item.ok ? [item.error] : own && !own.ok ? own.errors : [];
            for (const reason of reasons) errors.push(plainError(reason, requestId));
            return { errors };
          }),
        );
      }
    }

    const prepared = items.map((item) =>
      item.ok ? { item, prep: graphql.prepare(item.request.query) } : { item, prep: null },
    );

    // The session, and with it the caller's access to the conversation the first request names
    // (one statement on PostgreSQL; conversations/prefetched-access.ts).
    const first = prepared[0];
    const args =
      first?.item.ok && first.prep?.ok
        ? graphql.rootFieldArguments(first.prep.doc, first.item.request)
        : null;
    const prefetchedAccess = await readSession(
      request,
      ctx.services.sessions,
      args ? conversationNamed(args) : null,
    );

    // Mutation rate limit: every field, alias and fragment expansion of the batch, before anything runs.
    const limiter = ctx.limiters.mutations;
    if (limiter) {
      let cost = 0;
      for (const { item, prep } of prepared) {
        if (item.ok && prep?.ok)
          cost += graphql.mutationFieldCount(prep.doc, item.request.operationName);
      }
      if (cost > 0) {
        const key = request.svc.session
          ? `s:${request.svc.session.sessionId}`
          : `a:${request.svc.clientAddress}`;
        const taken = limiter.take(key, cost);
        if (!taken.ok) {
          const err = rateLimited(taken.retryAfterSeconds, 'too many mutations');
          return answer(items.map(() => ({ errors: [codedError(err, requestId)] })));
        }
      }
    }

    const results: FormattedResult[] = [];
    for (const { item, prep } of prepared) {
      if (!item.ok) {
        results.push({ errors: [plainError(item.error, requestId)] });
        continue;
      }
      if (!prep || !prep.ok) {
        ctx.metrics.graphqlOperation(null, 'invalid');
        results.push(GraphqlExecutor.preparationErrors(prep ? prep.errors : [], requestId));
        continue;
      }
      const kind = graphql.operationType(prep.doc, item.request.operationName);
      if (kind === 'subscription') {
        results.push({
          errors: [plainError('subscriptions run over the WebSocket at /api/ws', requestId)],
        });
        continue;
      }
      const context = graphqlContext(ctx, request, reply);
      if (results.length === 0 && request.svc.session) {
        context.sessionAccount = request.svc.session.account;
        context.prefetchedAccess = prefetchedAccess;
      }
      const result = await graphql.run(prep.doc, item.request, context);
      ctx.metrics.graphqlOperation(
        graphql.operationName(prep.doc, item.request.operationName),
        result.errors ? 'error' : 'ok',
      );
      results.push(result);
    }
    return answer(results);
  }

  // GET /api: a query as URL parameters (GraphQL over HTTP), as urql sends by default; without
  // a `query` parameter, the explorer or its 404 (./graphiql.ts).
  const explorer = graphiqlPage(ctx);
  api.get<{ Querystring: Record<string, unknown> }>('', ROUTE_OPTIONS, async (request, reply) => {
    const params = request.query ?? {};
    if (!Object.hasOwn(params, 'query')) return explorer(request, reply);
    const body = fromUrlParameters(params);
    // A mutation never runs over GET (a link or an image could trigger it): 405, nothing runs.
    if (typeof body.query === 'string') {
      const parsed = parseBounded(body.query);
      if ('document' in parsed) {
        const op = selectOperation(parsed.document, body.operationName);
        if (op?.operation === OperationTypeNode.MUTATION) {
          return reply
            .code(405)
            .header('allow', 'POST')
            .send({ error: 'method_not_allowed', message: 'send mutations with POST' });
        }
      }
    }
    // Answers depend on the session cookie: no cache may keep them.
    reply.header('cache-control', 'no-store');
    return respond(request, reply, [body], false);
  });
}

/**
 * A GET request's parameters as the body POST would carry: `variables` is JSON-encoded; a value
 * that is not a JSON object is passed on as it is, so `readRequest` refuses it as it refuses the
 * same in a POST body. A repeated parameter is an array, hence no string. `extensions` is
 * ignored, as in a POST body.
 */
function fromUrlParameters(params: Record<string, unknown>): Record<string, unknown> {
  const json = (v: unknown) => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v;
    }
  };
  return {
    query: params.query,
    variables: json(params.variables),
    operationName: params.operationName,
  };
}

/**
 * A dependency that fails before the operations run (the session lookup in `respond`)
 * answers as GraphQL: one UNAVAILABLE or TIMEOUT error per request of the batch, never a bare
 * HTTP 500 and never an anonymous run. Anything else goes to the tree's handler.
 */
function dependencyErrorHandler(
  err: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const dependency = dependencyError(err);
  if (!dependency) return fastifyErrorHandler(err, request, reply);
  logDependencyFailure(request.log, dependency, { phase: 'before execution' });
  const result = { errors: [codedError(dependency, request.id)] };
  const count = Array.isArray(request.body) ? request.body.length : 0;
  reply.header('retry-after', String(DEPENDENCY_RETRY_AFTER_SECONDS));
  return reply.send(count > 0 ? Array.from({ length: count }, () => result) : result);
}

function readRequest(r: Record<string, unknown>): Item {
  if (typeof r.query !== 'string') return { ok: false, error: 'request has no "query" string' };
  if (
    r.variables !== undefined &&
    r.variables !== null &&
    (typeof r.variables !== 'object' || Array.isArray(r.variables))
  ) {
    return { ok: false, error: '"variables" must be a JSON object' };
  }
  if (
    r.operationName !== undefined &&
    r.operationName !== null &&
    typeof r.operationName !== 'string'
  ) {
    return { ok: false, error: '"operationName" must be a string' };
  }
  return {
    ok: true,
    request: {
      query: r.query,
      variables: (r.variables as Record<string, unknown> | null | undefined) ?? null,
      operationName: (r.operationName as string | null | undefined) ?? null,
    },
  };
}

export function graphqlContext(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
): GraphqlContext {
  return {
    services: ctx.services,
    clock: ctx.clock,
    federation: ctx.federation,
    config: ctx.config,
    version: ctx.version,
    requestId: request.id,
    session: request.svc.session,
    sessionToken: request.svc.sessionToken,
    ip: request.svc.clientAddress,
    userAgent: firstHeader(request.headers['user-agent']) ?? null,
    log: request.log as unknown as GraphqlContext['log'],
    cookies: httpCookieJar(ctx.config, request, reply),
    transport: 'http',
  };
}
