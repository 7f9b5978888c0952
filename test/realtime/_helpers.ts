import net from 'node:net';

import { createClient, type Client, type ExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';

import type { Agent, TestApp, TestAppOptions } from '../_util/app.js';
import { agentHeaders, startTestServer } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { until } from '../_util/until.js';

export type Server = Awaited<ReturnType<typeof startTestServer>>;

export { until };

/** A real server plus the small API tests need (GraphQL over inject, signing up). */
export interface RealtimeTestServer {
  server: Server;
  wsUrl: string;
  gql(
    query: string,
    variables?: Record<string, unknown>,
    agent?: Agent | null,
  ): Promise<{ data?: Record<string, any> | null; errors?: any[] }>;
  signUp(username?: string): Promise<Agent>;
  /** The little of a TestApp the seed helpers need (ctx and gql over inject). */
  app: TestApp;
  connections(): Promise<number>;
  subscriptions(): Promise<number>;
  stop(): Promise<void>;
}

export async function startRealtime(opts: TestAppOptions = {}): Promise<RealtimeTestServer> {
  const server = await startTestServer(opts);
  // signUpAndIn needs only ctx and gql of a TestApp.
  const asApp = {
    ctx: server.ctx,
    gql: async (query: string, variables?: Record<string, unknown>, agent?: Agent | null) => {
      const response = await server.app.inject({
        method: 'POST',
        url: '/api',
        headers: { 'content-type': 'application/json', ...agentHeaders(agent) },
        payload: JSON.stringify({ query, variables }),
      });
      return { status: response.statusCode, body: response.json(), response };
    },
  } as unknown as TestApp;
  const gql: RealtimeTestServer['gql'] = async (query, variables, agent) =>
    (await asApp.gql(query, variables, agent)).body;
  const gauge = async (name: 'wsConnections' | 'wsSubscriptions') =>
    (await server.ctx.metrics[name].get()).values[0]?.value ?? 0;
  return {
    server,
    wsUrl: `ws://127.0.0.1:${server.address.port}/api/ws`,
    gql,
    signUp: (username) => signUpAndIn(asApp, username ? { username } : {}),
    app: asApp,
    connections: () => gauge('wsConnections'),
    subscriptions: () => gauge('wsSubscriptions'),
    stop: () => server.stop(),
  };
}

export function cookieHeader(agent: Agent): string {
  return `svc_session=${agent.cookies.svc_session}`;
}

/** A graphql-ws client (graphql-transport-ws) that sends the agent's session cookie. */
export function modernClient(
  url: string,
  agent: Agent,
  options: { onClose?: (event: { code: number; reason: string }) => void } = {},
): Client {
  const cookie = cookieHeader(agent);
  class CookieSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers: { cookie } });
    }
  }
  return createClient({
    url,
    webSocketImpl: CookieSocket,
    retryAttempts: 0,
    lazy: false,
    keepAlive: 0,
    shouldRetry: () => false,
    on: {
      closed: (event) => options.onClose?.(event as { code: number; reason: string }),
      error: () => {},
    },
    onNonLazyError: () => {},
  });
}

/** The results of one subscription, collected as they arrive. */
export class Collected {
  readonly results: ExecutionResult<Record<string, any>>[] = [];
  error: unknown = null;
  completed = false;
  readonly unsubscribe: () => void;

  constructor(client: Client, query: string, variables?: Record<string, unknown>) {
    this.unsubscribe = client.subscribe(
      { query, variables },
      {
        next: (value) => this.results.push(value as ExecutionResult<Record<string, any>>),
        error: (err) => {
          this.error = err;
        },
        complete: () => {
          this.completed = true;
        },
      },
    );
  }

  /** Data of the results received so far, for `field` (e.g. `workspaceEvents`). */
  events(field: string): Array<Record<string, any>> {
    return this.results.filter((r) => r.data?.[field]).map((r) => r.data![field]);
  }

  async waitFor(count: number, what = `${count} results`, timeoutMs = 10_000): Promise<void> {
    await until(() => this.results.length >= count, what, timeoutMs);
  }

  async waitDone(timeoutMs = 10_000): Promise<void> {
    await until(() => this.completed || this.error !== null, 'the subscription to end', timeoutMs);
  }
}

/** A raw WebSocket that queues what it receives, for the legacy protocol and bad frames. */
export class RawClient {
  readonly messages: any[] = [];
  readonly ws: WebSocket;
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  closeInfo: { code: number; reason: string } | null = null;
  private cursor = 0;

  constructor(
    url: string,
    protocol: string | string[] | null,
    agent: Agent | null,
    options: { autoPong?: boolean } = {},
  ) {
    this.ws = new WebSocket(url, protocol ?? [], {
      headers: agent ? { cookie: cookieHeader(agent) } : {},
      ...options,
    });
    this.ws.on('message', (data, binary) => {
      const text = data.toString();
      this.messages.push(binary ? { binary: text } : JSON.parse(text));
    });
    this.ws.on('error', () => {});
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('unexpected-response', (_req, res) =>
        reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })),
      );
      this.ws.once('error', reject);
    });
    this.closed = new Promise((resolve) => {
      this.ws.once('close', (code, reason) => {
        this.closeInfo = { code, reason: reason.toString() };
        resolve(this.closeInfo);
      });
    });
  }

  static async open(url: string, protocol: string, agent: Agent | null): Promise<RawClient> {
    const client = new RawClient(url, protocol, agent);
    await client.opened;
    return client;
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The next message not yet taken (optionally the next matching one). */
  async next(match: (m: any) => boolean = () => true, timeoutMs = 10_000): Promise<any> {
    let found: any;
    await until(
      () => {
        for (let i = this.cursor; i < this.messages.length; i += 1) {
          if (match(this.messages[i])) {
            found = this.messages[i];
            this.cursor = i + 1;
            return true;
          }
        }
        return false;
      },
      'a websocket message',
      timeoutMs,
    );
    return found;
  }

  /** Messages of one operation id, so far. */
  of(id: string): any[] {
    return this.messages.filter((m) => m.id === id);
  }

  async waitClosed(timeoutMs = 10_000): Promise<{ code: number; reason: string }> {
    await until(() => this.closeInfo !== null, 'the socket to close', timeoutMs);
    return this.closeInfo!;
  }

  close(): void {
    this.ws.close();
  }
}

/** The HTTP answer to an upgrade request (status and body), for refusals. */
export async function upgradeAnswer(
  port: number,
  headers: Record<string, string>,
  path = '/api/ws',
): Promise<{ status: number; body: string; headers: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let raw = '';
    const done = () => {
      const [head = '', body = ''] = raw.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0);
      resolve({ status, body, headers: head });
    };
    socket.on('data', (chunk) => {
      raw += chunk.toString();
      // A 101 keeps the socket open: the head is the whole answer.
      if (raw.startsWith('HTTP/1.1 101') && raw.includes('\r\n\r\n')) {
        socket.destroy();
        done();
      }
    });
    socket.on('error', reject);
    socket.on('close', done);
    const lines = [
      `GET ${path} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Version: 13',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

/** Sends a catalog event straight on the bus (for events no service publishes yet). */
export function workspaceEvent(
  serverId: string,
  type: string,
  payload: Record<string, unknown>,
): { topic: string; type: string; at: number; payload: Record<string, unknown> } {
  return {
    topic: `workspace:${serverId}`,
    type,
    at: Date.now(),
    payload: { serverId, ...payload },
  };
}

export const WORKSPACE_EVENTS = `subscription($id: ID!) {
  workspaceEvents(serverId: $id) { type serverId conversationId at payload }
}`;

export const RELAY_STREAM = `subscription { relayStream { type serverId conversationId at payload } }`;

/** Creates a workspace owned by `owner`; answers its id and its channels (by name). */
export async function createWorkspace(
  t: RealtimeTestServer,
  owner: Agent,
  name = 'Team',
): Promise<{ id: string; channels: Record<string, string> }> {
  const res = await t.gql(
    'mutation($n: String!) { createWorkspace(input: { name: $n }) { id channels { id name } } }',
    { n: name },
    owner,
  );
  if (!res.data?.createWorkspace) throw new Error(`createWorkspace: ${JSON.stringify(res.errors)}`);
  const ws = res.data.createWorkspace;
  return {
    id: ws.id,
    channels: Object.fromEntries(ws.channels.map((c: any) => [c.name, c.id])),
  };
}

/** Makes `member` join the workspace with an invite `owner` creates. */
export async function joinWorkspace(
  t: RealtimeTestServer,
  owner: Agent,
  member: Agent,
  serverId: string,
  role: 'MEMBER' | 'GUEST' = 'MEMBER',
  channelIds?: string[],
): Promise<void> {
  const invite = await t.gql(
    `mutation($s: ID!, $r: WorkspaceRole, $c: [ID!]) {
      createWorkspaceInvite(input: { serverId: $s, role: $r, channelIds: $c }) { token }
    }`,
    { s: serverId, r: role, c: channelIds ?? null },
    owner,
  );
  const token = invite.data?.createWorkspaceInvite?.token;
  if (!token) throw new Error(`createWorkspaceInvite: ${JSON.stringify(invite.errors)}`);
  const joined = await t.gql(
    'mutation($t: String!) { joinWorkspace(token: $t) { id } }',
    { t: token },
    member,
  );
  if (!joined.data?.joinWorkspace)
    throw new Error(`joinWorkspace: ${JSON.stringify(joined.errors)}`);
}

/** Sends a message through POST /api; answers its id. */
export async function sendMessage(
  t: RealtimeTestServer,
  agent: Agent,
  conversationId: string,
  text: string,
): Promise<string> {
  const res = await t.gql(
    'mutation($c: ID!, $t: String!) { sendMessage(input: { conversationId: $c, text: $t }) { id } }',
    { c: conversationId, t: text },
    agent,
  );
  if (!res.data?.sendMessage) throw new Error(`sendMessage: ${JSON.stringify(res.errors)}`);
  return res.data.sendMessage.id;
}
