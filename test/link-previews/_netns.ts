import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Runs a scenario script in a network and mount namespace of its own (`unshare --net --mount`):
// no traffic can leave it. Inside, public-looking addresses are added to the loopback device,
// a temporary resolv.conf naming the scenario's DNS server (127.0.0.1:53) is bind-mounted over
// /etc/resolv.conf, and the script prints its results as one JSON line on stdout.

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

/** Public-looking unicast addresses the scenarios' page servers listen on. */
export const PUBLIC_V4 = ['93.184.216.34', '151.101.1.1'];
/** Refused addresses that canaries listen on (127.0.0.1 is there already). */
export const PRIVATE_V4 = ['10.0.0.5', '169.254.169.254', '192.168.1.1', '100.64.0.1'];

/** Why namespace tests cannot run here, or null when they can. */
export function netnsUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'needs root for unshare --net';
  return null;
}

/** Whether this process runs inside the namespace `runVitestInNetns` made. */
export const IN_NETNS = process.env.SVC_IN_NETNS === '1';

/** The shell lines that set the namespace up, then run `command`. */
function setupScript(resolv: string, command: string): string {
  const addrs = [...PUBLIC_V4, ...PRIVATE_V4].map((a) => `ip addr add ${a}/32 dev lo`);
  return [
    'set -e',
    'ip link set lo up',
    ...addrs,
    `mount --bind ${resolv} /etc/resolv.conf`,
    `exec ${command}`,
  ].join('\n');
}

/**
 * Relays a Unix socket to PostgreSQL's TCP port, so a test inside the namespace (whose
 * 127.0.0.1 is its own) reaches the test database: returns the URL to use there.
 */
async function pgRelay(dir: string): Promise<{ url: string; close: () => void } | null> {
  const pgUrl = process.env.SVC_TEST_DATABASE_URL;
  if (!pgUrl || process.env.SVC_TEST_DB !== 'postgres') return null;
  const target = new URL(pgUrl);
  const sockDir = path.join(dir, 'pg');
  fs.mkdirSync(sockDir);
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) =>
    server.listen(path.join(sockDir, `.s.PGSQL.${target.port || 5432}`), resolve),
  );
  const inside = new URL(pgUrl);
  inside.hostname = 'localhost';
  inside.searchParams.set('host', sockDir);
  return { url: inside.toString(), close: () => server.close() };
}

/**
 * Runs one test file under vitest inside a fresh namespace (SVC_IN_NETNS=1 there), on the
 * current project's database; resolves to its exit code and output.
 */
export async function runVitestInNetns(file: string): Promise<{ code: number; output: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-netns-'));
  const resolv = path.join(dir, 'resolv.conf');
  fs.writeFileSync(resolv, 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n');
  const relay = await pgRelay(dir);
  const project = process.env.SVC_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';
  const vitest = path.join(root, 'node_modules/vitest/vitest.mjs');
  const script = setupScript(
    resolv,
    `node ${vitest} run --project ${project} --reporter=verbose ${path.relative(root, file)}`,
  );
  try {
    return await new Promise((resolve, reject) => {
      const child = spawn('unshare', ['--net', '--mount', '--', 'sh', '-c', script], {
        cwd: root,
        env: {
          ...process.env,
          SVC_IN_NETNS: '1',
          ...(relay ? { SVC_TEST_DATABASE_URL: relay.url } : {}),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? 1, output }));
    });
  } finally {
    relay?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function runInNetns<T>(scenario: string, input: unknown = {}): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-netns-'));
  const resolv = path.join(dir, 'resolv.conf');
  fs.writeFileSync(resolv, 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n');
  const script = setupScript(resolv, `node --import tsx ${path.join(here, scenario)}`);
  try {
    return await new Promise<T>((resolve, reject) => {
      const child = spawn('unshare', ['--net', '--mount', '--', 'sh', '-c', script], {
        cwd: root,
        env: { ...process.env, SCENARIO_INPUT: JSON.stringify(input) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => {
        const line = out
          .split('\n')
          .reverse()
          .find((l) => l.startsWith('{"result":'));
        if (code !== 0 || !line) {
          reject(new Error(`scenario ${scenario} exited ${code}:\n${err}\n${out}`));
          return;
        }
        resolve((JSON.parse(line) as { result: T }).result);
      });
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
