import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

import { currentStamp, fingerprint } from '../../scripts/build-lib.mjs';
import { BUILD_INPUTS } from '../../scripts/build.mjs';
import { until } from './until.js';

// Real `svc serve` processes for tests of several processes (test/realtime/cluster.test.ts,
// test/faults/redis-processes.test.ts), and the small client they need: password sign-in,
// GraphQL over HTTP, graphql-ws with the session cookie.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const PASSWORD = 'correct horse battery staple';

export { freePort } from './ports.js';

let entry: string[] | null = null;

/**
 * How to start the command line: the build in dist/ when it was built from the sources as they
 * are (CI builds before the tests), which starts in about 60% of the time; else the sources
 * through tsx.
 */
function cliEntry(): string[] {
  entry ??=
    currentStamp(ROOT) === fingerprint(ROOT, BUILD_INPUTS)
      ? ['dist/cli/index.js']
      : ['--import', 'tsx', 'src/cli/index.ts'];
  return entry;
}

/** `svc serve` in a process of its own, from the current build or the sources. */
export class ServerProcess {
  readonly child: ChildProcess;
  output = '';
  exited: Promise<number | null>;

  /**
   * `root`: another tree of svc to run from its sources (an earlier release, for the rolling
   * upgrade's test); this checkout's by default.
   */
  constructor(
    readonly port: number,
    readonly metricsPort: number,
    env: Record<string, string>,
    root?: string,
  ) {
    const entry = root ? ['--import', 'tsx', 'src/cli/index.ts'] : cliEntry();
    this.child = spawn(process.execPath, [...entry, 'serve'], {
      cwd: root ?? ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        ...env,
        SVC_SERVER_HOST: '127.0.0.1',
        SVC_SERVER_PORT: String(port),
        SVC_METRICS_ADDR: `127.0.0.1:${metricsPort}`,
        SVC_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d) => (this.output += d.toString()));
    this.child.stderr!.on('data', (d) => (this.output += d.toString()));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async ready(): Promise<void> {
    await until(
      async () => {
        if (this.child.exitCode !== null) throw new Error(`server exited:\n${this.output}`);
        try {
          return (await fetch(`${this.base}/healthz`)).ok;
        } catch {
          return false;
        }
      },
      `the server on ${this.port}`,
      90_000,
    );
  }

  /** A gauge from this process's metrics listener. */
  async gauge(name: string): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Number(line.split(' ')[1]) : Number.NaN;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
    await this.exited;
  }

  /** Ends the process at once, as a crash or an out-of-memory kill would: nothing runs after. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

export interface Session {
  cookie: string;
  csrf: string;
}

/** Where a server answers HTTP: a ServerProcess, or the browser tests' TestServer. */
export interface HttpBase {
  readonly base: string;
}

export async function login(server: HttpBase, username: string): Promise<Session> {
  const res = await fetch(`${server.base}/api`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query:
        'mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken } }',
      variables: { u: username, p: PASSWORD },
    }),
  });
  const body = (await res.json()) as { data?: { login: { csrfToken: string } } };
  const cookies = res.headers.getSetCookie().map((c) => c.split(';')[0]!);
  return { cookie: cookies.join('; '), csrf: body.data!.login.csrfToken };
}

export async function gql(
  server: HttpBase,
  session: Session,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ data?: any; errors?: any[] }> {
  const res = await fetch(`${server.base}/api`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      cookie: session.cookie,
      'x-csrf-token': session.csrf,
    },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { data?: any; errors?: any[] };
}

export function clientOn(
  server: ServerProcess,
  session: Session,
  onClose: (code: number, reason: string) => void,
): Client {
  class CookieSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers: { cookie: session.cookie } });
    }
  }
  return createClient({
    url: `ws://127.0.0.1:${server.port}/api/ws`,
    webSocketImpl: CookieSocket,
    retryAttempts: 0,
    lazy: false,
    keepAlive: 0,
    shouldRetry: () => false,
    onNonLazyError: () => {},
    on: {
      closed: (e) => {
        const { code, reason } = e as { code: number; reason: string };
        onClose(code, reason);
      },
    },
  });
}
