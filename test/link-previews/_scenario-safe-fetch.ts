import zlib from 'node:zlib';

import { SafeFetch } from '../../src/net/safe-fetch.js';

import { report, startCanaries, startDns, startHttp } from './_netns-env.js';

// Runs inside the namespace (safe-fetch.test.ts): every case fetched at once, results by name.

const PAGE = '<html><head><title>Hello</title></head><body>hi</body></html>';
const MIB = 1024 * 1024;

let rebinds = 0;
await startDns({
  'www.example-site.com': ['93.184.216.34'],
  'other.example-site.com': ['151.101.1.1'],
  'private.example-site.com': ['10.0.0.5'],
  'loopback.example-site.com': ['127.0.0.1'],
  'metadata.example-site.com': ['169.254.169.254'],
  'mixed.example-site.com': ['93.184.216.34', '127.0.0.1'],
  // Answers public and loopback in turn: a check and a connect that resolve apart would differ.
  'rebind.example-site.com': () => [rebinds++ % 2 === 0 ? '93.184.216.34' : '127.0.0.1'],
  localhost: ['127.0.0.1'],
});
const canaries = await startCanaries();

const seen: Record<string, Record<string, string | string[] | undefined>> = {};
/** The client ports that asked for /reuse: one per connection used. */
const reusePorts = new Set<number>();
await startHttp('93.184.216.34', 80, (req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  seen[url.pathname] = req.headers;
  if (url.pathname === '/reuse') reusePorts.add(req.socket.remotePort ?? 0);
  const m = /^\/hops\/(\d+)$/.exec(url.pathname);
  if (m) {
    const n = Number(m[1]);
    res.writeHead(n === 0 ? 200 : 302, n === 0 ? {} : { location: `/hops/${n - 1}` });
    res.end(n === 0 ? PAGE : '');
    return;
  }
  switch (url.pathname) {
    case '/page':
    case '/creds':
    case '/reuse':
      res.end(PAGE);
      return;
    case '/page-close':
      // No keep-alive: the next fetch must connect, and look the name up, again.
      res.writeHead(200, { connection: 'close' }).end(PAGE);
      return;
    case '/to-loopback':
      res.writeHead(302, { location: 'http://127.0.0.1/' }).end();
      return;
    case '/to-private-name':
      res.writeHead(301, { location: 'http://private.example-site.com/' }).end();
      return;
    case '/to-metadata':
      res.writeHead(307, { location: 'http://[::ffff:169.254.169.254]/latest' }).end();
      return;
    case '/to-other':
      res.writeHead(302, { location: 'http://other.example-site.com/final' }).end();
      return;
    case '/to-file':
      res.writeHead(302, { location: 'file:///etc/passwd' }).end();
      return;
    case '/loop':
      res.writeHead(302, { location: '/loop' }).end();
      return;
    case '/hang':
      return;
    case '/slow-body':
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html>');
      setInterval(() => res.write(' '), 200).unref();
      return;
    case '/huge-headers':
      res.setHeader('x-big', 'a'.repeat(40 * 1024));
      res.end(PAGE);
      return;
    case '/gzip-bomb':
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(zlib.gzipSync(Buffer.alloc(64 * MIB, 0x20)));
      return;
    case '/gzip':
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(zlib.gzipSync(PAGE));
      return;
    case '/br':
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'br' });
      res.end(zlib.brotliCompressSync(PAGE));
      return;
    case '/deflate':
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'deflate' });
      res.end(zlib.deflateSync(PAGE));
      return;
    case '/exactly-1mib':
      res.end(Buffer.alloc(MIB, 0x20));
      return;
    case '/over-1mib':
      res.end(Buffer.alloc(MIB + 1, 0x20));
      return;
    default:
      res.writeHead(404).end();
  }
});
await startHttp('151.101.1.1', 80, (_req, res) => res.end(PAGE));

const fetcher = new SafeFetch();
const cases: Record<string, string> = {
  plain: 'http://www.example-site.com/page',
  literalPublic: 'http://93.184.216.34/page',
  credentials: 'http://user:secret@www.example-site.com/creds',
  redirectToOtherSite: 'http://www.example-site.com/to-other',
  fiveRedirects: 'http://www.example-site.com/hops/5',
  sixRedirects: 'http://www.example-site.com/hops/6',
  endlessRedirects: 'http://www.example-site.com/loop',
  redirectToLoopback: 'http://www.example-site.com/to-loopback',
  redirectToPrivateName: 'http://www.example-site.com/to-private-name',
  redirectToMappedMetadata: 'http://www.example-site.com/to-metadata',
  redirectToFile: 'http://www.example-site.com/to-file',
  hang: 'http://www.example-site.com/hang',
  slowBody: 'http://www.example-site.com/slow-body',
  hugeHeaders: 'http://www.example-site.com/huge-headers',
  gzipBomb: 'http://www.example-site.com/gzip-bomb',
  gzip: 'http://www.example-site.com/gzip',
  br: 'http://www.example-site.com/br',
  deflate: 'http://www.example-site.com/deflate',
  exactly1MiB: 'http://www.example-site.com/exactly-1mib',
  over1MiB: 'http://www.example-site.com/over-1mib',
  nameToPrivate: 'http://private.example-site.com/',
  nameToLoopback: 'http://loopback.example-site.com/',
  nameToMetadata: 'http://metadata.example-site.com/',
  nameMixed: 'http://mixed.example-site.com/page',
  nameUnknown: 'http://nowhere.example-site.com/',
  localhost: 'http://localhost/',
  localhostTrailingDot: 'http://localhost./',
  localhostFullwidth: 'http://ｌｏｃａｌｈｏｓｔ/',
  loopbackDecimal: 'http://2130706433/',
  loopbackHex: 'http://0x7f000001/',
  loopbackHexDotted: 'http://0x7f.0.0.1/',
  loopbackOctal: 'http://0177.0.0.1/',
  loopbackShort: 'http://127.1/',
  loopbackTrailingDot: 'http://127.0.0.1./',
  loopbackFullwidthDigits: 'http://１２７.０.０.１/',
  loopbackV6: 'http://[::1]/',
  loopbackMapped: 'http://[::ffff:127.0.0.1]/',
  loopbackMappedHex: 'http://[::ffff:7f00:1]/',
  loopbackNat64: 'http://[64:ff9b::7f00:1]/',
  loopback6to4: 'http://[2002:7f00:1::1]/',
  loopbackCompatible: 'http://[::127.0.0.1]/',
  zero: 'http://0/',
  zeroDotted: 'http://0.0.0.0/',
  privateLiteral: 'http://10.0.0.5/',
  privateHex: 'http://0xa000005/',
  metadataLiteral: 'http://169.254.169.254/latest/meta-data/',
  sharedLiteral: 'http://100.64.0.1/',
  https: 'https://127.0.0.1/',
  httpsPrivateName: 'https://private.example-site.com/',
  ftp: 'ftp://www.example-site.com/',
  file: 'file:///etc/passwd',
  javascript: 'javascript:alert(1)',
};
const rebindResults: unknown[] = [];
const started = Date.now();
const results: Record<string, unknown> = {};
await Promise.all([
  ...Object.entries(cases).map(async ([name, url]) => {
    const t0 = Date.now();
    const r = await fetcher.get(url);
    results[name] = {
      ok: r.ok,
      reason: r.ok ? undefined : r.reason,
      url: r.ok ? r.url : undefined,
      status: r.ok ? r.status : undefined,
      bytes: r.ok ? r.body.length : undefined,
      text: r.ok && r.body.length < 1000 ? r.body.toString() : undefined,
      ms: Date.now() - t0,
    };
  }),
  (async () => {
    for (let i = 0; i < 6; i++) {
      const r = await fetcher.get('http://rebind.example-site.com/page-close');
      rebindResults.push(r.ok ? 'ok' : r.reason);
    }
  })(),
]);
// Fetches one after another to one origin share the connection checked when it was made.
for (let i = 0; i < 3; i++) {
  await fetcher.get('http://www.example-site.com/reuse');
  await new Promise((r) => setTimeout(r, 20));
}

report({
  results,
  reuseConnections: reusePorts.size,
  rebind: rebindResults,
  canaryConnections: canaries.connections(),
  credentialHeaders: { authorization: seen['/creds']?.authorization ?? null },
  totalMs: Date.now() - started,
});
