import crypto from 'node:crypto';

import type { FastifyInstance } from 'fastify';

// The document the web client runs workspace plugins' code in (docs/plugins.md, "Where plugin
// code runs"). The page frames it with `sandbox="allow-scripts"` (no same origin: an opaque
// origin, so no cookies, storage or DOM of the page) and hands it, over a MessageChannel, the
// runner and the plugin's entry file. Its one script starts a dedicated Worker from that runner
// and passes the channel on: plugin code runs in the worker, so a plugin that loops forever
// blocks neither the page nor this document, and the page ends it by removing the frame.

/** Where the sandbox document is served (a fixed address: the page frames it). */
export const PLUGIN_SANDBOX_PATH = '/plugin-sandbox.html';

/**
 * The document's only script: the first message carries the runner's source and the port;
 * anything after it is ignored. It reads nothing else and answers nothing.
 */
export const PLUGIN_SANDBOX_SCRIPT = [
  "addEventListener('message', function first(e) {",
  "  removeEventListener('message', first);",
  '  var d = e.data, port = e.ports && e.ports[0];',
  "  if (!d || typeof d.runner !== 'string' || !port) return;",
  "  var url = URL.createObjectURL(new Blob([d.runner], { type: 'text/javascript' }));",
  "  var w = new Worker(url, { name: 'plugin' });",
  '  w.postMessage(d.init, [port]);',
  '});',
].join('\n');

const SCRIPT_HASH = crypto.createHash('sha256').update(PLUGIN_SANDBOX_SCRIPT).digest('base64');

/**
 * The sandbox's own policy, stricter than the page's: its one script by hash, workers and
 * modules only from `blob:` (the runner and the plugin's file, made in the sandbox), no
 * connections of any kind, no images, styles, forms or plugins, framed only by this origin, and
 * sandboxed even when opened on its own. A worker made from a `blob:` keeps this policy, so the
 * plugin's code is held to it too.
 */
export const PLUGIN_SANDBOX_CSP = [
  "default-src 'none'",
  `script-src 'sha256-${SCRIPT_HASH}' blob:`,
  'worker-src blob:',
  "connect-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
  'sandbox allow-scripts',
].join('; ');

const DOCUMENT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plugin sandbox</title></head><body><script>${PLUGIN_SANDBOX_SCRIPT}</script></body></html>`;

/** `GET /plugin-sandbox.html`: the same bytes for every plugin and every person. */
export function registerPluginSandbox(app: FastifyInstance): void {
  app.get(PLUGIN_SANDBOX_PATH, async (_request, reply) =>
    reply
      .header('content-security-policy', PLUGIN_SANDBOX_CSP)
      // Framed by the page of this origin only (the global DENY would refuse the page too).
      .header('x-frame-options', 'SAMEORIGIN')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(DOCUMENT),
  );
}
