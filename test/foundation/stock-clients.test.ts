import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { BatchHttpLink } from '@apollo/client/link/batch-http';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import {
  Client as UrqlClient,
  cacheExchange,
  fetchExchange,
  subscriptionExchange,
} from '@urql/core';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { SubscriptionClient } from 'subscriptions-transport-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

import { startTestServer } from '../_util/app.js';
import { DEFAULT_PASSWORD } from '../_util/seed.js';

// Widely used clients, as published and with their defaults, against a real server on a real
// port: each signs in through the API, sends the login payload's csrfToken as X-CSRF-Token,
// runs a query and a mutation, and receives an event on a subscription. urql sends queries as
// GET /api by default (docs/api.md).

const LOGIN = `mutation($u: String!, $p: String!) {
  login(input: { username: $u, password: $p }) { csrfToken user { id } } }`;
const ME = 'query Me { me { id username } }';
const CREATE_WORKSPACE = `mutation($n: String!) {
  createWorkspace(input: { name: $n }) { id channels { id name } } }`;
const SEND = `mutation($c: ID!, $t: String!) {
  sendMessage(input: { conversationId: $c, text: $t }) { id } }`;
const EVENTS = `subscription($id: ID!) {
  workspaceEvents(serverId: $id) { type serverId conversationId payload } }`;

type Server = Awaited<ReturnType<typeof startTestServer>>;

/**
 * What a browser does for these clients and Node's fetch does not: keep the cookies a response
 * sets and send them back. Records each request's method and whether its body was a batch.
 */
class CookieJar {
  readonly cookies = new Map<string, string>();
  readonly requests: Array<{ method: string; url: string; batch: boolean }> = [];

  readonly fetch: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    if (this.cookies.size > 0) headers.set('cookie', this.header());
    const method = init?.method ?? 'GET';
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    this.requests.push({
      method,
      url,
      batch: typeof init?.body === 'string' && init.body.startsWith('['),
    });
    const res = await fetch(input, { ...init, headers });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    return res;
  };

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  /** A `ws` WebSocket class that sends the jar's cookies on the upgrade. */
  socketClass() {
    const cookie = () => this.header();
    return class CookieSocket extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers: { cookie: cookie() } });
      }
    };
  }
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}

describe('stock GraphQL clients', () => {
  let server: Server;
  let api: string;
  let wsUrl: string;
  const cleanups: Array<() => unknown> = [];

  const subscriptions = async () =>
    (await server.ctx.metrics.wsSubscriptions.get()).values[0]?.value ?? 0;

  const account = (username: string) =>
    server.ctx.services.accounts.createPasswordAccount({
      username,
      password: DEFAULT_PASSWORD,
      email: null,
    });

  const graphqlWs = (jar: CookieJar): WsClient => {
    const client = createWsClient({
      url: wsUrl,
      webSocketImpl: jar.socketClass(),
      retryAttempts: 0,
      shouldRetry: () => false,
    });
    cleanups.push(() => client.dispose());
    return client;
  };

  beforeAll(async () => {
    server = await startTestServer();
    api = `${server.url}/api`;
    wsUrl = `ws://127.0.0.1:${server.address.port}/api/ws`;
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
    await until(async () => (await subscriptions()) === 0, 'subscriptions to end');
  });
  afterAll(async () => server?.stop());

  /** An Apollo Client over `httpLink`, sending the CSRF token once it has one. */
  function apollo(jar: CookieJar, httpLink: ApolloLink) {
    let csrf: string | null = null;
    const csrfLink = new ApolloLink((operation, forward) => {
      if (csrf) {
        operation.setContext(({ headers }: { headers?: Record<string, string> }) => ({
          headers: { ...headers, 'x-csrf-token': csrf },
        }));
      }
      return forward(operation);
    });
    const wsLink = new GraphQLWsLink(graphqlWs(jar));
    const link = ApolloLink.split(
      ({ query }) =>
        query.definitions.some(
          (d) => d.kind === 'OperationDefinition' && d.operation === 'subscription',
        ),
      wsLink,
      csrfLink.concat(httpLink),
    );
    const client = new ApolloClient({
      link,
      cache: new InMemoryCache(),
      defaultOptions: { query: { fetchPolicy: 'no-cache' }, mutate: { fetchPolicy: 'no-cache' } },
    });
    cleanups.push(() => client.stop());
    return {
      client,
      async login(username: string) {
        const res = await client.mutate<{ login: { csrfToken: string; user: { id: string } } }>({
          mutation: gql(LOGIN),
          variables: { u: username, p: DEFAULT_PASSWORD },
        });
        csrf = res.data!.login.csrfToken;
        return res.data!.login;
      },
    };
  }

  /** Subscribes with Apollo and runs `trigger`; the first MessageCreated event. */
  async function apolloEvent(
    client: ApolloClient,
    serverId: string,
    trigger: () => Promise<unknown>,
  ) {
    const events: Array<Record<string, any>> = [];
    const sub = client.subscribe({ query: gql(EVENTS), variables: { id: serverId } }).subscribe({
      next: (result) => {
        if (result.data) events.push((result.data as Record<string, any>).workspaceEvents);
      },
    });
    cleanups.push(() => sub.unsubscribe());
    await until(async () => (await subscriptions()) === 1, 'the subscription');
    await trigger();
    await until(() => events.some((e) => e.type === 'MessageCreated'), 'MessageCreated');
    return events.find((e) => e.type === 'MessageCreated')!;
  }

  it('Apollo Client: HTTP link for queries and mutations, graphql-ws link for subscriptions', async () => {
    await account('apollohttp');
    const jar = new CookieJar();
    const { client, login } = apollo(jar, new HttpLink({ uri: api, fetch: jar.fetch }));
    const me = await login('apollohttp');
    expect(jar.cookies.has('svc_session')).toBe(true);

    const read = await client.query<{ me: { id: string; username: string } }>({ query: gql(ME) });
    expect(read.data!.me).toMatchObject({ id: me.user.id, username: 'apollohttp' });

    const made = await client.mutate<{ createWorkspace: { id: string; channels: any[] } }>({
      mutation: gql(CREATE_WORKSPACE),
      variables: { n: 'Apollo' },
    });
    const space = made.data!.createWorkspace;
    const channel = space.channels[0].id as string;

    const event = await apolloEvent(client, space.id, () =>
      client.mutate({ mutation: gql(SEND), variables: { c: channel, t: 'from apollo' } }),
    );
    expect(event).toMatchObject({ serverId: space.id, conversationId: channel });
    expect(jar.requests.every((r) => r.method === 'POST')).toBe(true);
  });

  it('Apollo Client: batch HTTP link sends a query and a mutation in one POST', async () => {
    await account('apollobatch');
    const jar = new CookieJar();
    const { client, login } = apollo(
      jar,
      new BatchHttpLink({ uri: api, fetch: jar.fetch, batchInterval: 20 }),
    );
    await login('apollobatch');
    const before = jar.requests.length;
    const [read, made] = await Promise.all([
      client.query<{ me: { username: string } }>({ query: gql(ME) }),
      client.mutate<{ createWorkspace: { id: string; channels: any[] } }>({
        mutation: gql(CREATE_WORKSPACE),
        variables: { n: 'Batched' },
      }),
    ]);
    expect(read.data!.me.username).toBe('apollobatch');
    const space = made.data!.createWorkspace;
    expect(jar.requests.slice(before)).toEqual([
      expect.objectContaining({ method: 'POST', batch: true }),
    ]);

    const channel = space.channels[0].id as string;
    const event = await apolloEvent(client, space.id, () =>
      client.mutate({ mutation: gql(SEND), variables: { c: channel, t: 'batched' } }),
    );
    expect(event.conversationId).toBe(channel);
  });

  it('urql with its defaults: queries over GET, mutations over POST with the CSRF header', async () => {
    await account('urqluser');
    const jar = new CookieJar();
    let csrf: string | null = null;
    const ws = graphqlWs(jar);
    const client = new UrqlClient({
      url: api,
      fetch: jar.fetch,
      fetchOptions: (): RequestInit => ({ headers: csrf ? { 'x-csrf-token': csrf } : {} }),
      exchanges: [
        cacheExchange,
        fetchExchange,
        subscriptionExchange({
          forwardSubscription: (request) => ({
            subscribe: (sink) => ({
              unsubscribe: ws.subscribe({ ...request, query: request.query ?? '' }, sink),
            }),
          }),
        }),
      ],
    });
    const login = await client.mutation(LOGIN, { u: 'urqluser', p: DEFAULT_PASSWORD }).toPromise();
    expect(login.error).toBeUndefined();
    csrf = login.data.login.csrfToken as string;

    const read = await client.query(ME, {}, { requestPolicy: 'network-only' }).toPromise();
    expect(read.error).toBeUndefined();
    expect(read.data.me.username).toBe('urqluser');
    const get = jar.requests.find((r) => r.method === 'GET');
    expect(get?.url).toMatch(/\/api\?query=/);

    const made = await client.mutation(CREATE_WORKSPACE, { n: 'Urql' }).toPromise();
    expect(made.error).toBeUndefined();
    const space = made.data.createWorkspace as { id: string; channels: Array<{ id: string }> };
    expect(jar.requests.filter((r) => r.method === 'POST')).toHaveLength(2);

    const events: Array<Record<string, any>> = [];
    const sub = client.subscription(EVENTS, { id: space.id }).subscribe((result) => {
      if (result.data) events.push(result.data.workspaceEvents);
    });
    cleanups.push(() => sub.unsubscribe());
    await until(async () => (await subscriptions()) === 1, 'the subscription');
    const sent = await client
      .mutation(SEND, { c: space.channels[0]!.id, t: 'from urql' })
      .toPromise();
    expect(sent.error).toBeUndefined();
    await until(() => events.some((e) => e.type === 'MessageCreated'), 'MessageCreated');
  });

  it('graphql-ws and the legacy subscriptions-transport-ws client receive events', async () => {
    await account('wsuser');
    const jar = new CookieJar();
    // Sign in and create through plain HTTP; the two WebSocket clients only subscribe.
    const post = async (query: string, variables: Record<string, unknown>, csrf?: string) => {
      const res = await jar.fetch(api, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(csrf ? { 'x-csrf-token': csrf } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      return (await res.json()) as { data: Record<string, any> };
    };
    const csrf = (await post(LOGIN, { u: 'wsuser', p: DEFAULT_PASSWORD })).data.login
      .csrfToken as string;
    const space = (await post(CREATE_WORKSPACE, { n: 'Sockets' }, csrf)).data.createWorkspace;

    const modern: Array<Record<string, any>> = [];
    const unsubscribe = graphqlWs(jar).subscribe(
      { query: EVENTS, variables: { id: space.id } },
      {
        next: (r) => void modern.push((r.data as Record<string, any>).workspaceEvents),
        error: () => {},
        complete: () => {},
      },
    );
    cleanups.push(unsubscribe);

    const legacyClient = new SubscriptionClient(wsUrl, { reconnect: false }, jar.socketClass());
    cleanups.push(() => legacyClient.close());
    const legacy: Array<Record<string, any>> = [];
    const legacySub = legacyClient
      .request({ query: EVENTS, variables: { id: space.id } })
      .subscribe({
        next: (r) => void legacy.push((r.data as Record<string, any>).workspaceEvents),
      });
    cleanups.push(() => legacySub.unsubscribe());

    await until(async () => (await subscriptions()) === 2, 'both subscriptions');
    await post(SEND, { c: space.channels[0].id, t: 'to both' }, csrf);
    for (const [name, events] of [
      ['graphql-ws', modern],
      ['subscriptions-transport-ws', legacy],
    ] as const) {
      await until(() => events.some((e) => e.type === 'MessageCreated'), `${name} MessageCreated`);
    }
  });
});
