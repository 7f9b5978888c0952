import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { currentStamp, fingerprint } from '../../scripts/build-lib.mjs';
import { BUILD_INPUTS } from '../../scripts/build.mjs';
import { until } from '../realtime/_helpers.js';
import { ROOT } from './_binaries.js';

// Hosts simulated on one machine for test/deploy/several-hosts.test.ts: each a network namespace
// of its own joined to the machine by a veth pair, where an svc process runs with its own
// address, its own wall clock (test/deploy/_clock-offset.mjs) and PostgreSQL and Redis reached
// over the network, at the machine's side of its veth, as on another host.

const ip = (...args: string[]) => spawnSync('ip', args, { encoding: 'utf8', timeout: 10_000 });

/** Why namespaces cannot be made here, or '' when they can. */
export function namespacesUnavailable(): string {
  if (process.getuid?.() !== 0) return 'not root: ip netns needs root';
  const probe = `svcprobe${process.pid}`;
  const added = ip('netns', 'add', probe);
  if (added.error) return `ip is not installed (${added.error.message}); iproute2 has it`;
  if (added.status !== 0) return `ip netns add failed: ${added.stderr.trim()}`;
  ip('netns', 'delete', probe);
  return '';
}

export interface Host {
  /** The namespace's name. */
  ns: string;
  /** The machine's address on the host's link (where the host reaches PostgreSQL and Redis). */
  gateway: string;
  /** The host's own address. */
  address: string;
}

/**
 * `count` hosts on links 10.247.<n>.<4i>/30, <n> from the process id so that two runs on one
 * machine do not meet. `remove()` deletes the namespaces and their links.
 */
export function makeHosts(count: number): { hosts: Host[]; remove(): void } {
  const net3 = 10 + (process.pid % 240);
  const hosts: Host[] = [];
  const remove = () => {
    for (const h of hosts) ip('netns', 'delete', h.ns);
  };
  try {
    for (let i = 0; i < count; i += 1) {
      const ns = `svc${process.pid}h${i}`;
      const outside = `sv${process.pid % 100000}h${i}`;
      const host: Host = {
        ns,
        gateway: `10.247.${net3}.${4 * i + 1}`,
        address: `10.247.${net3}.${4 * i + 2}`,
      };
      const steps: string[][] = [
        ['netns', 'add', ns],
        ['link', 'add', outside, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns],
        ['addr', 'add', `${host.gateway}/30`, 'dev', outside],
        ['link', 'set', outside, 'up'],
        ['-n', ns, 'addr', 'add', `${host.address}/30`, 'dev', 'eth0'],
        ['-n', ns, 'link', 'set', 'eth0', 'up'],
        ['-n', ns, 'link', 'set', 'lo', 'up'],
      ];
      hosts.push(host);
      for (const step of steps) {
        const done = ip(...step);
        if (done.status !== 0) throw new Error(`ip ${step.join(' ')}: ${done.stderr.trim()}`);
      }
    }
  } catch (err) {
    remove();
    throw err;
  }
  return { hosts, remove };
}

/**
 * Passes TCP connections made to `listen` (the machine's side of the hosts' links) on to
 * `target`: the path from another host to a PostgreSQL or Redis that listens on loopback here.
 */
export async function forward(
  listen: { host: string; port: number },
  target: { host: string; port: number },
): Promise<net.Server> {
  const server = net.createServer((inbound) => {
    const outbound = net.connect(target.port, target.host);
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  return server;
}

/** svc's ports on each host: every namespace has its own. */
const HOST_PORT = 8080;
const HOST_METRICS_PORT = 9090;

/** `svc serve` inside a host's namespace, listening on the host's address. */
export class HostNode {
  readonly child: ChildProcess;
  output = '';
  readonly exited: Promise<number | null>;
  readonly clockFile: string;

  constructor(
    readonly host: Host,
    env: Record<string, string>,
    dir: string,
  ) {
    this.clockFile = path.join(dir, `clock-${host.ns}`);
    this.setClockOffset(0);
    const entry =
      currentStamp(ROOT) === fingerprint(ROOT, BUILD_INPUTS)
        ? ['dist/cli/index.js']
        : ['--import', 'tsx', 'src/cli/index.ts'];
    this.child = spawn('ip', ['netns', 'exec', host.ns, process.execPath, ...entry, 'serve'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        ...env,
        NODE_OPTIONS: `--import ${path.join(ROOT, 'test/deploy/_clock-offset.mjs')}`,
        SVC_TEST_CLOCK_OFFSET_FILE: this.clockFile,
        SVC_SERVER_HOST: host.address,
        SVC_SERVER_PORT: String(HOST_PORT),
        SVC_METRICS_ADDR: `${host.address}:${HOST_METRICS_PORT}`,
        SVC_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d) => (this.output += d.toString()));
    this.child.stderr!.on('data', (d) => (this.output += d.toString()));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  get base(): string {
    return `http://${this.host.address}:${HOST_PORT}`;
  }

  /** Moves this host's wall clock: `ms` ahead of the machine's (behind when negative). */
  setClockOffset(ms: number): void {
    const temp = `${this.clockFile}.new`;
    fs.writeFileSync(temp, String(ms));
    fs.renameSync(temp, this.clockFile);
  }

  async ready(): Promise<void> {
    await until(
      async () => {
        if (this.child.exitCode !== null) throw new Error(`svc exited:\n${this.output}`);
        try {
          return (await fetch(`${this.base}/readyz`)).ok;
        } catch {
          return false;
        }
      },
      `svc on ${this.host.address}`,
      90_000,
    );
  }

  /** A gauge from this process's metrics listener. */
  async gauge(name: string): Promise<number> {
    const res = await fetch(`http://${this.host.address}:${HOST_METRICS_PORT}/metrics`);
    const line = (await res.text()).split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Number(line.split(' ')[1]) : Number.NaN;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    await this.exited;
  }
}
