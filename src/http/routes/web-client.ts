import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { AppContext } from '../../context.js';
import { registerPluginSandbox } from './plugin-sandbox.js';

/** The folder `npm run build` writes the web client to (`web/` built by Vite). */
export const BUILT_WEB_CLIENT_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../dist/web',
);

/**
 * The page's Content-Security-Policy: scripts, styles, workers and connections from this origin
 * only (no inline script or style, no eval); images also from `data:` and `blob:` (previews of a
 * file before it is uploaded). `connect-src 'self'` covers the WebSocket on the same host.
 * `frame-src 'self'` lets the page frame the plugin sandbox, and holds that frame to this origin
 * wherever it navigates.
 */
export const WEB_CLIENT_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "font-src 'self'",
  // The plugin sandbox (plugin-sandbox.ts) is the only document the page frames.
  "frame-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Paths the client routes itself (history API): each answers index.html. */
export const WEB_CLIENT_PATHS = [
  '/',
  '/invite/*',
  '/reset-password',
  '/w/*',
  '/dm/*',
  '/settings',
  '/settings/*',
  '/admin',
  '/admin/*',
];

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.txt': 'text/plain; charset=utf-8',
};
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

/**
 * Files of the build at fixed addresses (not hashed, so revalidated on every use): the service
 * worker, whose address must stay the same for the browser to update it, and the icons the
 * manifest names.
 */
const ROOT_FILES = ['sw.js', 'icon.svg', 'icon-192.png', 'icon-512.png', 'icon-maskable-512.png'];

/** The web app manifest (docs/web-client.md, "Installable"): the instance's name and icons. */
export function webManifest(name: string): Record<string, unknown> {
  return {
    name,
    short_name: name.length <= 12 ? name : name.slice(0, 12).trimEnd(),
    description: `${name}: team messaging`,
    id: '/',
    start_url: '/',
    scope: '/',
    display: 'standalone',
    background_color: '#1d2433',
    theme_color: '#3b5bdb',
    icons: [
      { src: '/icon.svg', sizes: 'any', type: 'image/svg+xml' },
      { src: '/icon-192.png', sizes: '192x192', type: 'image/png' },
      { src: '/icon-512.png', sizes: '512x512', type: 'image/png' },
      { src: '/icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
    ],
  };
}

interface Asset {
  body: Buffer;
  br: Buffer | null;
  gzip: Buffer | null;
  type: string;
}

function readIfExists(file: string): Buffer | null {
  try {
    return fs.readFileSync(file);
  } catch {
    return null;
  }
}

function pageHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', WEB_CLIENT_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('x-frame-options', 'DENY')
    .header('cross-origin-opener-policy', 'same-origin');
}

function pickEncoding(request: FastifyRequest, asset: Asset): 'br' | 'gzip' | null {
  const accepted = String(request.headers['accept-encoding'] ?? '');
  if (asset.br && /\bbr\b/.test(accepted)) return 'br';
  if (asset.gzip && /\bgzip\b/.test(accepted)) return 'gzip';
  return null;
}

/**
 * The web client (SVC_WEB_CLIENT, on by default): `index.html` at `/` and at the paths the client
 * routes itself, never cached; the files it loads under `/assets/`, named by their content hash,
 * cached for a year, served brotli- or gzip-compressed from the `.br`/`.gz` files the build wrote.
 * Files are read on first request and kept. Off, none of these routes exist.
 */
export function registerWebClient(app: FastifyInstance, ctx: AppContext): void {
  const setting = ctx.config.http.webClient;
  if (!setting) return;
  const dir = setting.dir ?? BUILT_WEB_CLIENT_DIR;
  const log = ctx.log.child({ subsystem: 'web-client' });
  if (!fs.existsSync(path.join(dir, 'index.html'))) {
    log.warn({ dir }, 'the web client is not built (run npm run build); / answers 503');
  }

  let index: Buffer | null = null;
  const page = async (_request: FastifyRequest, reply: FastifyReply) => {
    index ??= readIfExists(path.join(dir, 'index.html'));
    if (!index) {
      return reply
        .code(503)
        .header('cache-control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send('The web client is not built on this server. Run `npm run build`, then restart.\n');
    }
    return pageHeaders(reply)
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(index);
  };
  for (const url of WEB_CLIENT_PATHS) app.get(url, page);
  registerPluginSandbox(app);

  const assets = new Map<string, Asset | null>();
  const load = (name: string): Asset | null => {
    if (assets.has(name)) return assets.get(name) ?? null;
    const file = path.join(dir, 'assets', name);
    const body = readIfExists(file);
    const type = TYPES[path.extname(name)];
    const asset =
      body && type
        ? { body, type, br: readIfExists(`${file}.br`), gzip: readIfExists(`${file}.gz`) }
        : null;
    // Only files that exist are remembered: a name probed at random costs a stat, not memory.
    if (asset) assets.set(name, asset);
    return asset;
  };
  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    const name = request.params.name;
    const asset = ASSET_NAME.test(name) && !name.includes('..') ? load(name) : null;
    if (!asset) return reply.code(404).send({ error: 'not_found', message: 'no such file' });
    const encoding = pickEncoding(request, asset);
    reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .header('vary', 'accept-encoding')
      .type(asset.type);
    if (encoding) reply.header('content-encoding', encoding);
    return reply.send(encoding === 'br' ? asset.br : encoding === 'gzip' ? asset.gzip : asset.body);
  });

  const rootFiles = new Map<string, Buffer | null>();
  for (const name of ROOT_FILES) {
    app.get(`/${name}`, async (_request, reply) => {
      if (!rootFiles.has(name)) rootFiles.set(name, readIfExists(path.join(dir, name)));
      const body = rootFiles.get(name);
      if (!body) return reply.code(404).send({ error: 'not_found', message: 'no such file' });
      // The worker runs under the page's policy too: it fetches only from this origin.
      if (name === 'sw.js') pageHeaders(reply);
      return reply
        .header('cache-control', 'no-cache')
        .header('x-content-type-options', 'nosniff')
        .type(TYPES[path.extname(name)] ?? 'application/octet-stream')
        .send(body);
    });
  }
  const manifest = JSON.stringify(webManifest(setting.instanceName));
  app.get('/manifest.webmanifest', async (_request, reply) =>
    reply
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .type('application/manifest+json')
      .send(manifest),
  );
}
