import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';

import { until } from '../_util/until.js';
import { freePort } from '../_util/ports.js';
import { ROOT } from './_binaries.js';

// The reverse proxies of deploy/ run by the tests, from the repository's own files with only
// their names, ports and certificate paths changed, and a TLS certificate made for the test.

/** A self-signed certificate for 127.0.0.1 and localhost, made with openssl in `dir`. */
export function makeCertificate(dir: string): { cert: string; key: string; ca: Buffer } {
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { encoding: 'utf8', timeout: 20_000 },
  );
  if (made.status !== 0) throw new Error(`openssl could not make a certificate: ${made.stderr}`);
  return { cert, key, ca: fs.readFileSync(cert) };
}

/** `text` with `pattern` replaced; throws when the pattern is not there (the file changed). */
function edit(text: string, pattern: RegExp, replacement: string, what: string): string {
  if (!pattern.test(text)) throw new Error(`the configuration no longer has ${what}`);
  return text.replace(pattern, replacement);
}

export interface RunningProxy {
  /** The HTTPS port. */
  port: number;
  stop(): Promise<void>;
  output(): string;
}

function watch(child: ChildProcess): { output: () => string; exited: Promise<void> } {
  let out = '';
  child.stdout?.on('data', (d) => (out += d.toString()));
  child.stderr?.on('data', (d) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { output: () => out, exited };
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Waits until the proxy answers over TLS (any status), or throws with its output. */
async function answering(port: number, ca: Buffer, child: ChildProcess, output: () => string) {
  await until(
    async () => {
      if (child.exitCode !== null) throw new Error(`the proxy exited:\n${output()}`);
      return new Promise<boolean>((resolve) => {
        const req = https.get({ host: '127.0.0.1', port, path: '/healthz', ca }, (res) => {
          res.resume();
          resolve(true);
        });
        req.on('error', () => resolve(false));
        req.setTimeout(2_000, () => req.destroy());
      });
    },
    `the proxy on ${port}`,
    20_000,
  );
}

/**
 * nginx from deploy/nginx/svc.conf in front of `upstream` (host:port, or several), inside a minimal main
 * configuration with its temporary files in `dir`.
 */
export async function startNginx(
  binary: string,
  dir: string,
  cert: { cert: string; key: string; ca: Buffer },
  upstream: string | string[],
): Promise<RunningProxy> {
  const [port, httpPort] = [await freePort(), await freePort()];
  const servers = [upstream].flat().map((u) => `server ${u};`);
  let site = fs.readFileSync(path.join(ROOT, 'deploy/nginx/svc.conf'), 'utf8');
  site = edit(site, /server 127\.0\.0\.1:8080;/, servers.join('\n    '), 'the upstream');
  site = edit(site, /^\s*listen \[::\]:.*$/gm, '', 'the IPv6 listens');
  site = edit(site, /listen 80;/, `listen 127.0.0.1:${httpPort};`, 'the port 80 listen');
  site = edit(site, /listen 443 ssl/, `listen 127.0.0.1:${port} ssl`, 'the port 443 listen');
  site = edit(site, /ssl_certificate\s+\S+;/, `ssl_certificate ${cert.cert};`, 'the certificate');
  site = edit(site, /ssl_certificate_key\s+\S+;/, `ssl_certificate_key ${cert.key};`, 'the key');
  fs.writeFileSync(path.join(dir, 'svc.conf'), site);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((t) => `  ${t}_temp_path ${path.join(dir, t)};`)
    .join('\n');
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    [
      // Workers run as the user that starts nginx (root in CI: nginx would switch to nobody).
      ...(process.getuid?.() === 0 ? ['user root;'] : []),
      'worker_processes 1;',
      `pid ${path.join(dir, 'nginx.pid')};`,
      'error_log stderr warn;',
      'events { worker_connections 256; }',
      'http {',
      '  access_log off;',
      temp,
      `  include ${path.join(dir, 'svc.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const test = spawnSync(binary, ['-t', '-p', dir, '-e', 'stderr', '-c', 'nginx.conf'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (test.status !== 0) throw new Error(`nginx -t refused the configuration:\n${test.stderr}`);
  const child = spawn(
    binary,
    ['-p', dir, '-e', 'stderr', '-c', 'nginx.conf', '-g', 'daemon off;'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const { output, exited } = watch(child);
  await answering(port, cert.ca, child, output);
  return { port, output, stop: () => stopChild(child, exited) };
}

/**
 * Caddy from deploy/Caddyfile in front of `upstream` (host:port, or several): the site address
 * becomes 127.0.0.1 on a free port with the test's certificate, behind a block of global options
 * that keeps Caddy's admin endpoint, redirect listener and storage out of the machine's way.
 * With several upstreams, the file's commented lines for several processes are taken, as its
 * comment tells an operator to.
 */
export async function startCaddy(
  binary: string,
  dir: string,
  cert: { cert: string; key: string; ca: Buffer },
  upstream: string | string[],
): Promise<RunningProxy> {
  const [port, httpPort] = [await freePort(), await freePort()];
  const upstreams = [upstream].flat();
  let file = fs.readFileSync(path.join(ROOT, 'deploy/Caddyfile'), 'utf8');
  file = edit(file, /^chat\.example\.org \{/m, `https://127.0.0.1:${port} {`, 'the site address');
  file = edit(
    file,
    /reverse_proxy 127\.0\.0\.1:8080/,
    `reverse_proxy ${upstreams.join(' ')}`,
    'the upstream',
  );
  if (upstreams.length > 1) {
    for (const option of ['lb_policy', 'health_uri', 'health_interval', 'lb_try_duration']) {
      const line = new RegExp(`^(\\s*)# (${option} )`, 'm');
      file = edit(file, line, '$1$2', `the commented ${option} line`);
    }
  }
  file = edit(
    file,
    /^\s*# tls \/etc\/\S+ \/etc\/\S+$/m,
    `\ttls ${cert.cert} ${cert.key}`,
    'the commented tls line',
  );
  const global = [
    '{',
    '\tadmin off',
    '\tauto_https disable_redirects',
    `\thttp_port ${httpPort}`,
    `\tstorage file_system ${path.join(dir, 'storage')}`,
    '}',
    '',
  ].join('\n');
  const config = path.join(dir, 'Caddyfile');
  fs.writeFileSync(config, global + file);
  const env = { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir };
  const child = spawn(binary, ['run', '--adapter', 'caddyfile', '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  const { output, exited } = watch(child);
  await answering(port, cert.ca, child, output);
  return { port, output, stop: () => stopChild(child, exited) };
}

export interface HttpsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One HTTPS request to the proxy on 127.0.0.1:`port`, trusting `ca`; for the site `servername`
 * (its name in TLS and in Host) when given.
 */
export function httpsRequest(
  port: number,
  ca: Buffer,
  method: string,
  urlPath: string,
  opts: {
    headers?: Record<string, string>;
    body?: string | Buffer;
    localAddress?: string;
    servername?: string;
  } = {},
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: urlPath,
        ca,
        agent: false,
        localAddress: opts.localAddress,
        servername: opts.servername,
        headers: opts.servername ? { host: opts.servername, ...opts.headers } : opts.headers,
        timeout: 10_000,
      },
      (res) => {
        answered = true;
        let body = '';
        const done = () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', done);
        // An answer before the whole body was sent (413) may close the connection.
        res.on('error', done);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath} timed out`)));
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.end(opts.body);
  });
}
