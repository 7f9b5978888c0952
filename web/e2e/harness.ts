// Runs the built server as its own process on a free port, with a fresh data directory, and
// drives Debian's Chromium through playwright-core. The browser tests and the browser benchmark
// share it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'dist/cli/index.js');
/** Screenshots of the main screens, kept as artifacts of a run (git-ignored). */
export const SHOTS = path.join(ROOT, '.ci/out/web-screens');

export const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';

export function assertBuilt(): void {
  if (!fs.existsSync(path.join(ROOT, 'dist/web/index.html')) || !fs.existsSync(CLI)) {
    throw new Error('the server and web client are not built: run `npm run build` first');
  }
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set SVC_CHROMIUM)`,
    );
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export class TestServer {
  private proc: ChildProcess | null = null;
  readonly log: string[] = [];

  private constructor(
    readonly port: number,
    readonly env: Record<string, string>,
    readonly dataDir: string,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** `port`: a port chosen before (a federating server's public URL names it). */
  static async start(env: Record<string, string> = {}, port?: number): Promise<TestServer> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-web-'));
    port ??= await freePort();
    const s = new TestServer(
      port,
      {
        SVC_SERVER_HOST: '127.0.0.1',
        SVC_SERVER_PORT: String(port),
        SVC_DATA_DIR: dataDir,
        SVC_LOG_LEVEL: 'warn',
        ...env,
      },
      dataDir,
    );
    await s.boot();
    return s;
  }

  /** Starts (or restarts) the process on the same port and data directory. */
  async boot(): Promise<void> {
    const proc = spawn(process.execPath, [CLI, 'serve'], {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc = proc;
    const keep = (b: Buffer) => {
      this.log.push(b.toString());
      if (this.log.length > 200) this.log.shift();
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    const deadline = Date.now() + 75_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) throw new Error(`the server exited: ${this.log.join('')}`);
      try {
        const r = await fetch(`${this.url}/healthz`);
        if (r.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    // Not left running behind a failed set-up (its test file may never reach dispose).
    proc.kill('SIGKILL');
    throw new Error(`the server did not start within 75 s: ${this.log.join('').slice(-2000)}`);
  }

  async stop(): Promise<void> {
    const proc = this.proc;
    this.proc = null;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  async dispose(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** Runs the `svc` command line on the same database; answers its JSON output. */
  cli(args: string[], stdin = ''): unknown {
    const r = spawnSync(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...this.env },
      input: stdin,
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`svc ${args.join(' ')} failed: ${r.stderr}`);
    const out = r.stdout.trim();
    return out ? JSON.parse(out) : null;
  }
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A page in its own browser context (its own cookies and IndexedDB: one person on one device).
 * Content-Security-Policy violations and page errors are collected, and a test fails on them.
 */
export async function personPage(
  browser: Browser,
  base: string,
  opts: { width?: number; height?: number; colorScheme?: 'light' | 'dark' } = {},
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({
    baseURL: base,
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 800 },
    colorScheme: opts.colorScheme ?? 'light',
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (/Content.Security.Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
  });
  return { context, page, problems };
}

export async function shot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

// The set-up the browser tests share: people signing up, a workspace, an invite, a message.

export type Person = Awaited<ReturnType<typeof personPage>>;

/** Open registration with a cheap proof of work, for people to sign up in the page. */
const OPEN_REGISTRATION = { SVC_OPEN_REGISTRATION: 'true', SVC_REGISTRATION_POW_BITS: '10' };

/** The server and browser of a test file, set before its first test (`serveThisFile`). */
export interface Served {
  server: TestServer;
  browser: Browser;
}

/**
 * Registers the lifecycle the browser test files share: before the file's tests, a server with
 * open registration and a cheap proof of work (`opts.env` on top) and a browser, then the
 * file's own `setUp` (people, workspaces); after them, `opts.tearDown`, the browser closed and the server's process and data
 * directory removed (whatever of it was started, if the set-up failed half-way). Answers the
 * object the set-up fills in.
 */
export function serveThisFile(
  setUp: (s: Served) => Promise<void> = async () => undefined,
  opts: { env?: Record<string, string>; tearDown?: () => Promise<void> } = {},
): Served {
  const served = {} as Partial<Served>;
  beforeAll(async () => {
    assertBuilt();
    served.server = await TestServer.start({ ...OPEN_REGISTRATION, ...opts.env });
    served.browser = await launchBrowser();
    await setUp(served as Served);
  });
  afterAll(async () => {
    await opts.tearDown?.();
    await served.browser?.close();
    await served.server?.dispose();
  });
  return served as Served;
}

export const timeline = (p: Page) => p.getByRole('log', { name: /^Messages in/ });
export const composer = (p: Page) => p.locator('#composer-input');

/** Sends a message from the open conversation's box and waits until it shows. */
/** Opens the direct messages from the workspace rail. */
export async function openDirect(p: Page): Promise<void> {
  await p
    .getByRole('navigation', { name: 'Workspaces' })
    .getByRole('button', { name: /^Direct messages/ })
    .click();
}

export async function send(p: Page, text: string): Promise<void> {
  await composer(p).fill(text);
  await composer(p).press('Enter');
  await timeline(p).getByText(text, { exact: true }).first().waitFor();
}

/** Fills in the signup form (key account) and submits it, without waiting for the outcome. */
export async function fillSignUp(p: Page, username: string, displayName: string): Promise<void> {
  await p.getByRole('tab', { name: 'Create account' }).click();
  await p.getByLabel('Username').fill(username);
  await p.getByLabel(/Display name/).fill(displayName);
  await p.getByRole('button', { name: 'Create account' }).click();
}

/** Signs up from the sign-in screen on the page and waits for the app. */
export async function signUp(p: Page, username: string, displayName: string): Promise<void> {
  await fillSignUp(p, username, displayName);
  await p.getByRole('navigation', { name: 'Workspaces' }).waitFor({ timeout: 30_000 });
}

/**
 * Opens `/` and signs in with a password; waits until the sign-in form has gone (at phone width
 * the app's lists are a closed drawer, so nothing of them is looked for).
 */
export async function signIn(p: Page, username: string, password: string): Promise<void> {
  await p.goto('/');
  await p.getByLabel('Username').fill(username);
  await p.getByLabel('Password').fill(password);
  const button = p.getByRole('button', { name: 'Sign in', exact: true });
  await button.click();
  await button.waitFor({ state: 'detached', timeout: 30_000 });
}

/** Opens `/`, signs up, creates a workspace of that name and waits for its #general. */
export async function signUpWithWorkspace(
  p: Page,
  username: string,
  displayName: string,
  workspace: string,
): Promise<void> {
  await p.goto('/');
  await signUp(p, username, displayName);
  await createWorkspace(p, workspace);
}

export async function createWorkspace(p: Page, name: string): Promise<void> {
  await p.getByRole('button', { name: 'Create or join a workspace' }).click();
  await p.getByRole('dialog').getByLabel('Name', { exact: true }).fill(name);
  await p.getByRole('button', { name: 'Create', exact: true }).click();
  await p.getByRole('heading', { name: '#general' }).waitFor();
}

/** Makes an invite link to the open workspace (its dialog closed again). */
export async function createInviteLink(p: Page): Promise<string> {
  await p.getByRole('button', { name: 'Invite people' }).click();
  await p.getByRole('button', { name: 'Create invite link' }).click();
  const link = await p.getByLabel('Invite link').inputValue();
  await p.keyboard.press('Escape');
  return link;
}

/** Signs a new person up from an invite link; they land in the workspace's #general. */
export async function joinByInvite(
  p: Page,
  link: string,
  username: string,
  displayName: string,
): Promise<void> {
  await p.goto(new URL(link).pathname);
  await p.getByText('You were invited to a workspace').waitFor();
  await signUp(p, username, displayName);
  await p.getByRole('heading', { name: '#general' }).waitFor({ timeout: 20_000 });
}

/**
 * A person's session on the GraphQL API from Node, to set a test up faster than through the
 * page (hundreds of channels, dozens of people). Signing up this way needs a server started
 * with `SVC_OPEN_REGISTRATION=true`, `SVC_REGISTRATION_POW_BITS=0` and
 * `SVC_SIGNUP_REQUIRE_KEYS=false`.
 */
export class ApiSession {
  private constructor(
    private readonly base: string,
    private readonly cookie: string,
    private readonly csrf: string,
    readonly userId: string,
  ) {}

  static async signUp(server: TestServer, username: string, password: string): Promise<ApiSession> {
    return ApiSession.start(
      server,
      `mutation($i: SignupWithInviteInput!) { s: signupWithInvite(input: $i) { csrfToken user { id } } }`,
      { i: { username, password } },
    );
  }

  static async signIn(server: TestServer, username: string, password: string): Promise<ApiSession> {
    return ApiSession.start(
      server,
      `mutation($i: LoginInput!) { s: login(input: $i) { csrfToken user { id } } }`,
      { i: { username, password } },
    );
  }

  private static async start(
    server: TestServer,
    query: string,
    variables: Record<string, unknown>,
  ): Promise<ApiSession> {
    const res = await fetch(`${server.url}/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as {
      data?: { s: { csrfToken: string; user: { id: string } } };
    };
    if (!body.data) throw new Error(`sign-in failed: ${JSON.stringify(body)}`);
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    return new ApiSession(server.url, cookie, body.data.s.csrfToken, body.data.s.user.id);
  }

  /** Posts a body as itself (a plugin bundle's upload); answers the JSON answer. */
  async upload(route: string, body: Buffer, type: string): Promise<Record<string, any>> {
    const res = await fetch(`${this.base}${route}`, {
      method: 'POST',
      headers: { 'content-type': type, cookie: this.cookie, 'x-csrf-token': this.csrf },
      body: new Uint8Array(body),
    });
    const answer = (await res.json()) as Record<string, any>;
    if (!res.ok) throw new Error(`${route}: ${res.status} ${JSON.stringify(answer)}`);
    return answer;
  }

  /** Runs one operation; throws with the errors when there are any. */
  async gql<T = Record<string, any>>(
    query: string,
    variables: Record<string, unknown> = {},
  ): Promise<T> {
    const res = await fetch(`${this.base}/api`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        cookie: this.cookie,
        'x-csrf-token': this.csrf,
      },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: T; errors?: unknown[] };
    if (body.errors || !body.data) throw new Error(`${query}: ${JSON.stringify(body.errors)}`);
    return body.data;
  }
}
