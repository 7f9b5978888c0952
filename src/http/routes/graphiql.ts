import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { AppContext } from '../../context.js';

/** Where the explorer's files are served from (only while SVC_ENABLE_GRAPHIQL=true). */
export const GRAPHIQL_ASSETS = '/api/graphiql-assets';

const require = createRequire(import.meta.url);

// The browser bundles of graphiql 4 (UMD, expects React 18's UMD globals) and React 18, served
// from node_modules so the explorer works offline and loads nothing from a CDN
// (docs/dependencies.md). Only these names are served.
const ASSETS: Record<string, { pkg: string; file: string; type: string }> = {
  'react.production.min.js': {
    pkg: 'react',
    file: 'umd/react.production.min.js',
    type: 'text/javascript',
  },
  'react-dom.production.min.js': {
    pkg: 'react-dom',
    file: 'umd/react-dom.production.min.js',
    type: 'text/javascript',
  },
  'graphiql.min.js': { pkg: 'graphiql', file: 'graphiql.min.js', type: 'text/javascript' },
  'graphiql.min.css': { pkg: 'graphiql', file: 'graphiql.min.css', type: 'text/css' },
};

function assetPath(pkg: string, file: string): string {
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);
}

// The page sends the CSRF cookie's value as the header, so mutations work once signed in
// (through a `login` mutation in the explorer itself, which is CSRF-exempt).
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>svc GraphQL explorer</title>
<meta name="robots" content="noindex">
<link rel="stylesheet" href="${GRAPHIQL_ASSETS}/graphiql.min.css">
<style>html,body,#graphiql{height:100%;margin:0}</style>
</head>
<body>
<div id="graphiql">Loading the explorer...</div>
<script src="${GRAPHIQL_ASSETS}/react.production.min.js"></script>
<script src="${GRAPHIQL_ASSETS}/react-dom.production.min.js"></script>
<script src="${GRAPHIQL_ASSETS}/graphiql.min.js"></script>
<script>
(function () {
  function csrf() {
    var m = document.cookie.match(/(?:^|;\\s*)svc_csrf=([^;]*)/);
    return m ? decodeURIComponent(m[1]) : '';
  }
  function fetcher(params) {
    return fetch('/api', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf() },
      body: JSON.stringify(params),
    }).then(function (r) { return r.json(); });
  }
  ReactDOM.createRoot(document.getElementById('graphiql')).render(
    React.createElement(GraphiQL, { fetcher: fetcher, defaultEditorToolsVisibility: true }),
  );
})();
</script>
</body>
</html>
`;

/**
 * GET /api without a `query` parameter (./graphql.ts serves it with one): the GraphiQL explorer
 * while SVC_ENABLE_GRAPHIQL=true, else 404 JSON.
 */
export function graphiqlPage(
  ctx: AppContext,
): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  if (!ctx.config.http.enableGraphiql) {
    return async (_request, reply) =>
      reply.code(404).send({
        error: 'not_found',
        message: 'the GraphQL explorer is off on this server (SVC_ENABLE_GRAPHIQL)',
      });
  }
  return async (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(PAGE);
}

/** The explorer's files under /api/graphiql-assets/, only while SVC_ENABLE_GRAPHIQL=true. */
export function registerGraphiql(api: FastifyInstance, ctx: AppContext): void {
  if (!ctx.config.http.enableGraphiql) return;
  // Read once at boot: a missing package stops boot instead of serving a broken page.
  const files = new Map(
    Object.entries(ASSETS).map(([name, a]) => [
      name,
      { body: fs.readFileSync(assetPath(a.pkg, a.file)), type: a.type },
    ]),
  );
  api.get<{ Params: { name: string } }>(
    `${GRAPHIQL_ASSETS.slice('/api'.length)}/:name`,
    async (request, reply) => {
      const file = files.get(request.params.name);
      if (!file) return reply.code(404).send({ error: 'not_found', message: 'no such asset' });
      return reply
        .type(`${file.type}; charset=utf-8`)
        .header('cache-control', 'public, max-age=86400')
        .send(file.body);
    },
  );
}
