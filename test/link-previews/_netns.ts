import { spawn } from 'node:child_process';
import fs from 'node:fs';
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

export async function runInNetns<T>(scenario: string, input: unknown = {}): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-netns-'));
  const resolv = path.join(dir, 'resolv.conf');
  fs.writeFileSync(resolv, 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n');
  const addrs = [...PUBLIC_V4, ...PRIVATE_V4].map((a) => `ip addr add ${a}/32 dev lo`).join(' && ');
  const script = [
    'set -e',
    'ip link set lo up',
    addrs,
    `mount --bind ${resolv} /etc/resolv.conf`,
    `exec node --import tsx ${path.join(here, scenario)}`,
  ].join('\n');
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
