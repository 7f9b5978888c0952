import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  PLUGIN_SANDBOX_CSP,
  PLUGIN_SANDBOX_PATH,
  PLUGIN_SANDBOX_SCRIPT,
} from '../../src/http/routes/plugin-sandbox.js';
import { WEB_CLIENT_CSP } from '../../src/http/routes/web-client.js';
import { createTestApp, type TestApp } from '../_util/app.js';

// The serving rules of the web client at / (docs/web-client.md), on a folder shaped like the
// build's output. The client itself is tested in a browser (`npm run test:browser`).

const INDEX = '<!doctype html><script type="module" src="/assets/index-AbC123.js"></script>';
const SCRIPT = 'console.log("the client");'.repeat(50);

function builtClient(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-web-client-'));
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(path.join(dir, 'index.html'), INDEX);
  const js = path.join(dir, 'assets/index-AbC123.js');
  fs.writeFileSync(js, SCRIPT);
  fs.writeFileSync(`${js}.br`, zlib.brotliCompressSync(SCRIPT));
  fs.writeFileSync(`${js}.gz`, zlib.gzipSync(SCRIPT));
  fs.writeFileSync(path.join(dir, 'assets/style-Q1.css'), 'body{color:red}');
  fs.writeFileSync(path.join(dir, 'secret.txt'), 'not to be served');
  fs.writeFileSync(path.join(dir, 'sw.js'), 'self.addEventListener("push", () => {});');
  fs.writeFileSync(path.join(dir, 'icon-192.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  return dir;
}

describe('web client at /', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = builtClient();
    t = await createTestApp({
      env: { SVC_WEB_CLIENT_DIR: dir, SVC_INSTANCE_NAME: 'Acme Chat for the Whole Team' },
    });
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the service worker at /sw.js under the page policy, revalidated on each use', async () => {
    const res = await t.inject({ method: 'GET', url: '/sw.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    // A year-long cache would keep an old worker running after an upgrade.
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['content-security-policy']).toBe(WEB_CLIENT_CSP);
    expect(res.body).toContain('push');
    const icon = await t.inject({ method: 'GET', url: '/icon-192.png' });
    expect(icon.headers['content-type']).toBe('image/png');
    // A root file the build did not write is not found; nothing else at the root is served.
    expect((await t.inject({ method: 'GET', url: '/icon-512.png' })).statusCode).toBe(404);
  });

  it('serves a web app manifest with the instance name, its start and its icons', async () => {
    const res = await t.inject({ method: 'GET', url: '/manifest.webmanifest' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/manifest\+json/);
    const m = res.json();
    expect(m).toMatchObject({
      name: 'Acme Chat for the Whole Team',
      short_name: 'Acme Chat fo',
      start_url: '/',
      scope: '/',
      display: 'standalone',
    });
    const sizes = (m.icons as { sizes: string; type: string }[]).map((i) => i.sizes);
    expect(sizes).toEqual(expect.arrayContaining(['192x192', '512x512']));
  });

  it('serves index.html at / under a strict policy, never cached', async () => {
    const res = await t.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toBe(INDEX);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toBe(WEB_CLIENT_CSP);
    const directives = new Map(
      csp.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name, values] as const;
      }),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('style-src')).toEqual(["'self'"]);
    expect(directives.get('connect-src')).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    // The page frames the plugin sandbox of its own origin, nothing else.
    expect(directives.get('frame-src')).toEqual(["'self'"]);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it('serves the plugin sandbox under its own policy: its one script, no connections', async () => {
    const res = await t.inject({ method: 'GET', url: PLUGIN_SANDBOX_PATH });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toBe(PLUGIN_SANDBOX_CSP);
    const directives = new Map(
      csp.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name, values] as const;
      }),
    );
    // The script the document holds is the one its policy names by hash; nothing else runs
    // but what the sandbox makes from blob: (the runner and the plugin's file).
    const scripts = [...res.body.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
    expect(scripts).toEqual([PLUGIN_SANDBOX_SCRIPT]);
    const hash = crypto.createHash('sha256').update(PLUGIN_SANDBOX_SCRIPT).digest('base64');
    expect(directives.get('script-src')).toEqual([`'sha256-${hash}'`, 'blob:']);
    expect(directives.get('worker-src')).toEqual(['blob:']);
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('connect-src')).toEqual(["'none'"]);
    expect(directives.get('sandbox')).toEqual(['allow-scripts']);
    expect(directives.get('frame-ancestors')).toEqual(["'self'"]);
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    // No source of the page's origin: the plugin's code may not load scripts from it either.
    expect(csp.replace("frame-ancestors 'self'", '')).not.toMatch(/unsafe|\*|'self'/);
  });

  it('answers the page on the paths the client routes itself, and on nothing else', async () => {
    for (const url of [
      '/w/abc/def',
      '/invite/tok_123',
      '/reset-password?token=x',
      '/settings/sessions',
      '/admin',
    ]) {
      const res = await t.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toBe(INDEX);
    }
    for (const url of ['/nope', '/index.html', '/secret.txt', '/assets/', '/wx']) {
      expect((await t.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
  });

  it('serves hashed assets for a year, compressed as the browser accepts', async () => {
    const url = '/assets/index-AbC123.js';
    const plain = await t.inject({ method: 'GET', url });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['vary']).toBe('accept-encoding');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(SCRIPT);

    const br = await t.inject({
      method: 'GET',
      url,
      headers: { 'accept-encoding': 'gzip, deflate, br' },
    });
    expect(br.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(br.rawPayload).toString()).toBe(SCRIPT);

    const gz = await t.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gz.rawPayload).toString()).toBe(SCRIPT);

    // A file without compressed copies goes out as it is.
    const css = await t.inject({
      method: 'GET',
      url: '/assets/style-Q1.css',
      headers: { 'accept-encoding': 'br' },
    });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['content-encoding']).toBeUndefined();
  });

  it('refuses names outside the assets folder and files it does not know', async () => {
    for (const url of [
      '/assets/..%2Fsecret.txt',
      '/assets/..%2F..%2Fpackage.json',
      '/assets/index-AbC123.js.br',
      '/assets/missing-1.js',
      '/assets/.hidden.js',
    ]) {
      const res = await t.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toMatchObject({ error: 'not_found' });
    }
  });

  it('leaves the API as it was', async () => {
    expect((await t.gql('{ serverInfo { apiVersion } }')).body.data).toEqual({
      serverInfo: { apiVersion: 1 },
    });
    expect((await t.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('web client switched off (SVC_WEB_CLIENT=false)', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = builtClient();
    t = await createTestApp({ env: { SVC_WEB_CLIENT: 'false', SVC_WEB_CLIENT_DIR: dir } });
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves none of its routes', async () => {
    for (const url of ['/', '/w/a/b', '/invite/x', '/assets/index-AbC123.js']) {
      const res = await t.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toMatchObject({ error: 'not_found' });
    }
  });
});

describe('web client not built', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-web-empty-'));
    t = await createTestApp({ env: { SVC_WEB_CLIENT_DIR: dir } });
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers / with 503 saying how to build it, and logs it at boot', async () => {
    const res = await t.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('npm run build');
    expect(
      t.logs.find('the web client is not built (run npm run build); / answers 503'),
    ).toBeDefined();
  });
});
