import http from 'node:http';

import WebSocket from 'ws';

/** A signed-in API client: cookies and CSRF token, over a keep-alive agent. */
export interface Session {
  userId: string;
  cookie: string;
  csrf: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export interface HttpResult {
  status: number;
  body: string;
  setCookie: string[];
}

export function post(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (data += c));
        res.on('end', () => {
          const sc = res.headers['set-cookie'];
          resolve({
            status: res.statusCode ?? 0,
            body: data,
            setCookie: Array.isArray(sc) ? sc : [],
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function gql(
  base: string,
  query: string,
  variables: Record<string, unknown> = {},
  session?: Session,
): Promise<{ data: Record<string, any>; errors?: unknown[] }> {
  const headers: Record<string, string> = session
    ? { cookie: session.cookie, 'x-csrf-token': session.csrf }
    : {};
  const res = await post(`${base}/api`, JSON.stringify({ query, variables }), headers);
  const parsed = JSON.parse(res.body);
  if (parsed.errors) throw new Error(`${query.slice(0, 60)}: ${JSON.stringify(parsed.errors)}`);
  return parsed;
}

function sessionFrom(res: HttpResult, userId: string, csrf: string): Session {
  const cookie = res.setCookie.map((c) => c.split(';')[0]).join('; ');
  return { userId, cookie, csrf };
}

/** Signs up a password account (open registration, keys not required) and returns its session. */
export async function signup(
  base: string,
  username: string,
  password = 'bench password 1234',
): Promise<Session> {
  const body = JSON.stringify({
    query:
      'mutation($i: SignupWithInviteInput!) { signupWithInvite(input: $i) { csrfToken user { id } } }',
    variables: { i: { username, password } },
  });
  const res = await post(`${base}/api`, body);
  const parsed = JSON.parse(res.body);
  if (parsed.errors) throw new Error(`signup: ${JSON.stringify(parsed.errors)}`);
  return sessionFrom(
    res,
    parsed.data.signupWithInvite.user.id,
    parsed.data.signupWithInvite.csrfToken,
  );
}

export async function login(
  base: string,
  username: string,
  password = 'bench password 1234',
): Promise<Session> {
  const body = JSON.stringify({
    query:
      'mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken user { id } } }',
    variables: { u: username, p: password },
  });
  const res = await post(`${base}/api`, body);
  const parsed = JSON.parse(res.body);
  if (parsed.errors) throw new Error(`login: ${JSON.stringify(parsed.errors)}`);
  return sessionFrom(res, parsed.data.login.user.id, parsed.data.login.csrfToken);
}

/** A graphql-transport-ws socket to /api/ws that sends `connection_init` once open. */
function openSocket(base: string, session: Session | null): WebSocket {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/api/ws`, 'graphql-transport-ws', {
    headers: session ? { cookie: session.cookie } : {},
    perMessageDeflate: false,
  });
  ws.on('open', () => ws.send('{"type":"connection_init"}'));
  return ws;
}

/** One WebSocket subscriber speaking graphql-transport-ws with as little client work as possible. */
export interface Subscriber {
  ws: WebSocket;
  /** Called with each `next` frame's raw text and the time it arrived. */
  onNext: (raw: string, at: number) => void;
  close(): void;
}

export function subscribe(
  base: string,
  session: Session | null,
  query: string,
  variables: Record<string, unknown>,
  onNext: (raw: string, at: number) => void,
): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const ws = openSocket(base, session);
    const sub: Subscriber = { ws, onNext, close: () => ws.close() };
    let subscribed = false;
    ws.on('message', (data) => {
      const at = performance.now();
      const raw = data.toString();
      if (raw.startsWith('{"type":"connection_ack"')) {
        ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query, variables } }));
        // The server acknowledges nothing for a subscribe; a short settle lets it register.
        setTimeout(() => {
          subscribed = true;
          resolve(sub);
        }, 20);
        return;
      }
      if (raw.includes('"type":"ping"')) {
        ws.send('{"type":"pong"}');
        return;
      }
      if (raw.includes('"type":"next"')) sub.onNext(raw, at);
      else if (raw.includes('"type":"error"')) reject(new Error(raw));
    });
    ws.on('error', (err) => (subscribed ? undefined : reject(err)));
    ws.on('unexpected-response', (_req, res) =>
      reject(new Error(`upgrade refused: ${res.statusCode}`)),
    );
  });
}

/**
 * One whole connection of a subscriber: the WebSocket upgrade, `connection_init`, one
 * subscription, then the close; resolves once the server has closed the socket. The subscription
 * counts as handled when the server answers a `ping` sent after it (a connection's messages are
 * handled one at a time, in order), not after a pause as `subscribe` waits.
 */
export function connectionCycle(
  base: string,
  session: Session,
  query: string,
  variables: Record<string, unknown>,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = openSocket(base, session);
    ws.on('message', (data) => {
      const raw = data.toString();
      if (raw.startsWith('{"type":"connection_ack"')) {
        ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query, variables } }));
        ws.send('{"type":"ping"}');
      } else if (raw.includes('"type":"pong"')) {
        ws.close();
      } else if (raw.includes('"type":"error"')) {
        reject(new Error(raw));
      }
    });
    ws.on('close', () => resolve());
    ws.on('error', reject);
  });
}
