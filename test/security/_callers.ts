import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

import { encodeStatement, RELAY_VOUCH } from '../../src/federation/device-request.js';
import { RELAYED_ADDRESS } from '../../src/http/admission.js';
import { attachRealtime, type RealtimeServer } from '../../src/ws/server.js';
import { agentHeaders, type Agent } from '../_util/app.js';
import { DEFAULT_PASSWORD, signIn, signUpAndIn } from '../_util/seed.js';
import { buildWorld, type PersonKind, type World } from '../_util/world.js';
import { newKey, type TestKey } from '../devices/_keys.js';
import { deviceHeaders } from '../federation/_fed.js';
import { filePart, makeImage, multipart } from '../files/_image-upload.js';
import { exampleBundleText } from '../plugins/_bundles.js';
import { BUNDLE_TYPE } from '../plugins/_helpers.js';

// The callers of the authorization matrix: the populated world's people (test/_util/world.ts),
// plus a member of another workspace, a person from another server who joined the workspace
// through their relay, and anonymous. Each call goes the way that caller's calls go: GraphQL and
// the file routes through the app, the remote person's through the host side of the relay
// (`FederationService.host`, as `/s2s/v1/forward/*` runs it once the relay's RFC 9421 signature
// has verified; that check has its own tests in test/federation/http-signature.test.ts).

export const CALLERS = [
  'anonymous',
  'stranger',
  'outsider',
  'guest',
  'member',
  'moderator',
  'owner',
  'invitee',
  'removed',
  'operator',
  'remote',
] as const;
export type Caller = (typeof CALLERS)[number];

/** The world's name for each caller that is one of its people. */
const PERSON: Partial<Record<Caller, PersonKind>> = {
  stranger: 'stranger',
  guest: 'guest',
  member: 'member',
  moderator: 'moderator',
  owner: 'owner',
  invitee: 'pendingInvitee',
  removed: 'removed',
  operator: 'operator',
};

/** Files the web client serves from its root (the service worker and the manifest's icons). */
export const WEB_ROOT_FILES = [
  'sw.js',
  'icon.svg',
  'icon-192.png',
  'icon-512.png',
  'icon-maskable-512.png',
];

/** The relay the remote person comes from: a loopback address nothing listens on, never dialled. */
export const RELAY_ID = '127.0.0.1:9';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: Buffer;
}

export interface MatrixWorld extends World {
  /** The user id of each caller (null for anonymous). */
  idOf: Record<Caller, string | null>;
  /** The agent (cookies, CSRF) of each signed-in local caller. */
  agentOf(caller: Caller): Agent | null;
  /** The outsider's own workspace. */
  otherWorkspace: string;
  /** The password of every password account of the world. */
  password: string;
  /** A notification of the owner's (the mention in #general). */
  ownerNotification: string;
  /** The member's MLS device. */
  memberDeviceId: string;
  /** The encrypted conversation's message as sent (a valid PrivateMessage to send again). */
  encrypted: { ciphertext: string; epoch: number; frankingCommitment: string };
  /** A DM request of the outsider's to the owner. */
  outsiderDmRequest: string;
  /** The download URL of the member's own data export, ready. */
  memberExportUrl: string;
  /** The unsubscribe token of the member's digest mails (the link's `token`). */
  memberUnsubscribeToken: string;
  /** A second session of the stranger's, for revokeSession. */
  strangerSpareSession: string;
  /** The world plugin's bundle. */
  bundleSha256: string;
  pngBase64: string;
  /** A file of the web client's assets (a built client in a temporary folder). */
  assetName: string;
  /** The avatar the last avatar upload stored (`/api/files/avatars/...`). */
  avatarUrl: string;
  /** A file upload for an attachment the member created (its upload token in the form). */
  uploadRequest(): { method: 'POST'; url: string; body: Buffer; contentType: string };
  avatarRequest(): { method: 'POST'; url: string; body: Buffer; contentType: string };
  bundleRequest(): { method: 'POST'; url: string; body: Buffer; contentType: string };
  /** Any request to the app as `caller`. */
  request(
    caller: Caller,
    o: { method: 'GET' | 'POST'; url: string; body?: Buffer; contentType?: string },
  ): Promise<HttpAnswer>;
  /** A GraphQL request as `caller`; the HTTP status and the parsed body. */
  graphql(
    caller: Caller,
    query: string,
    variables: Record<string, unknown>,
  ): Promise<{ status: number; body: any }>;
  /** Subscribes over a real WebSocket and reports the first answer: a result, an error or a close. */
  subscribe(
    caller: Caller,
    query: string,
    variables: Record<string, unknown>,
  ): Promise<{ errors?: Array<{ message: string; extensions?: Record<string, unknown> }> }>;
}

/** The world of issue 40's schema walk, with the callers it lacks; federation on as a host. */
export async function buildMatrixWorld(): Promise<MatrixWorld> {
  const web = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-matrix-web-'));
  fs.mkdirSync(path.join(web, 'assets'));
  fs.writeFileSync(path.join(web, 'index.html'), '<!doctype html><title>svc</title>');
  fs.writeFileSync(path.join(web, 'assets', 'app-1234abcd.js'), 'console.log(1);');
  for (const name of WEB_ROOT_FILES) fs.writeFileSync(path.join(web, name), 'x');
  const world = await buildWorld({
    SVC_PUBLIC_BASE_URL: 'http://127.0.0.1:1',
    SVC_ROLE: 'both',
    SVC_WEB_CLIENT_DIR: web,
  });
  const { t } = world;
  const outsider = await signUpAndIn(t);
  const other = await t.gql(
    'mutation { createWorkspace(input: { name: "Elsewhere" }) { id } }',
    {},
    outsider,
  );
  const otherWorkspace = other.body.data!.createWorkspace.id as string;
  const dm = await t.gql(
    'mutation($m: [ID!]!) { createConversation(input: { memberIds: $m }) { dmRequestsSent { id } } }',
    { m: [world.people.owner.id] },
    outsider,
  );
  const outsiderDmRequest = dm.body.data!.createConversation.dmRequestsSent[0].id as string;

  const selfId = t.ctx.federation.service.selfId!;
  const device: TestKey = newKey();
  const relayed = async (o: {
    method: 'GET' | 'POST';
    url: string;
    body?: Buffer;
    contentType?: string;
  }): Promise<HttpAnswer> => {
    const body = o.body ?? Buffer.alloc(0);
    const signed = deviceHeaders(device, { host: selfId, method: o.method, path: o.url, body });
    const headers: Record<string, string> = {
      'svc-device-request': signed['svc-device-request'],
      'svc-device-signature': signed['svc-device-signature'],
      [RELAY_VOUCH]: encodeStatement({ user: 'rita', device: device.publicKey, displayName: null }),
    };
    if (o.contentType) headers['content-type'] = o.contentType;
    const answer = await t.ctx.federation.service.host(
      {
        peer: { serverId: RELAY_ID, key: 'verified' },
        method: o.method,
        tail: o.url,
        headers,
        body,
      },
      async (r) => {
        const res = await t.app.inject({
          remoteAddress: RELAYED_ADDRESS,
          method: r.method,
          url: r.url,
          headers: r.headers,
          payload: r.method === 'POST' ? r.body : undefined,
        });
        return { status: res.statusCode, headers: res.headers, body: res.rawPayload };
      },
    );
    return { status: answer.status, headers: answer.headers, body: answer.body };
  };

  const agentOf = (caller: Caller): Agent | null => {
    if (caller === 'outsider') return outsider;
    const kind = PERSON[caller];
    return kind ? world.people[kind] : null;
  };
  const request: MatrixWorld['request'] = async (caller, o) => {
    if (caller === 'remote') return relayed(o);
    const res = await t.inject({
      method: o.method,
      url: o.url,
      headers: {
        ...agentHeaders(agentOf(caller)),
        ...(o.contentType ? { 'content-type': o.contentType } : {}),
      },
      payload: o.method === 'POST' ? o.body : undefined,
    });
    return { status: res.statusCode, headers: res.headers, body: res.rawPayload };
  };
  const graphql: MatrixWorld['graphql'] = async (caller, query, variables) => {
    const res = await request(caller, {
      method: 'POST',
      url: '/api',
      body: Buffer.from(JSON.stringify({ query, variables })),
      contentType: 'application/json',
    });
    let body: unknown;
    try {
      body = JSON.parse(res.body.toString('utf8'));
    } catch {
      body = { unparsed: res.body.toString('utf8').slice(0, 300) };
    }
    return { status: res.status, body };
  };

  // The remote person joins the workspace as a member, through their relay.
  const invite = await t.gql(
    'mutation($s: ID!) { createWorkspaceInvite(input: { serverId: $s, maxUses: 1 }) { token } }',
    { s: world.ids.workspace },
    world.people.owner,
  );
  const joined = await graphql(
    'remote',
    'mutation($t: String!) { joinWorkspace(token: $t) { id } me: __typename }',
    { t: invite.body.data!.createWorkspaceInvite.token },
  );
  if (joined.body.errors) throw new Error(`remote join: ${JSON.stringify(joined.body.errors)}`);
  const remoteMe = await graphql('remote', '{ me { id } }', {});
  const remoteId = remoteMe.body.data.me.id as string;

  // WebSocket: the app listens on loopback with the realtime endpoint attached, as main.ts does.
  let realtime: RealtimeServer | null = null;
  let listening: Promise<string> | null = null;
  const wsUrl = () =>
    (listening ??= (async () => {
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      realtime = attachRealtime(t.ctx, t.graphql, t.app.server);
      return `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api/ws`;
    })());
  const subscribe: MatrixWorld['subscribe'] = async (caller, query, variables) => {
    const url = await wsUrl();
    const headers = agentHeaders(agentOf(caller));
    return new Promise((resolve) => {
      let settled = false;
      const client = createClient({
        url,
        lazy: true,
        retryAttempts: 0,
        webSocketImpl: class extends WebSocket {
          constructor(address: string, protocols?: string | string[]) {
            super(address, protocols, { headers });
          }
        },
      });
      const done = (value: { errors?: any[] }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        void client.dispose();
        resolve(value);
      };
      // A subscription that is accepted stays open without a first event: accepted once it has
      // neither failed nor closed within the wait (no event is due in a still world).
      const timer = setTimeout(() => done({}), 1_500);
      client.subscribe(
        { query, variables },
        {
          next: (r) => done({ errors: r.errors as any[] | undefined }),
          error: (e) =>
            done({
              errors: Array.isArray(e)
                ? (e as any[])
                : [
                    {
                      message: String((e as { reason?: string }).reason ?? e),
                      extensions: { code: 'CLOSED' },
                    },
                  ],
            }),
          complete: () => done({}),
        },
      );
    });
  };

  const { people, ids } = world;
  const read = async (who: Agent, query: string, v: Record<string, unknown> = {}) => {
    const res = await t.gql(query, v, who);
    if (res.body.errors) throw new Error(`${query}: ${JSON.stringify(res.body.errors)}`);
    return res.body.data!;
  };
  const ownerNotification = (await read(people.owner, '{ notifications { items { id } } }'))
    .notifications.items[0].id as string;
  const memberDeviceId = (await read(people.member, '{ myDevices { id } }')).myDevices[0]
    .id as string;
  await signIn(t, people.stranger.username);
  const spare = (await read(people.stranger, '{ mySessions { id current } }')).mySessions.find(
    (s: { current: boolean }) => !s.current,
  ).id as string;
  const bundleSha256 = (
    await read(people.owner, 'query($s: ID!) { workspacePlugins(serverId: $s) { bundleSha256 } }', {
      s: ids.workspace,
    })
  ).workspacePlugins[0].bundleSha256 as string;
  const sent = (
    await read(
      people.owner,
      'query($c: ID!) { messages(conversationId: $c) { items { ciphertext mls { epoch frankingCommitment } } } }',
      { c: ids.encrypted },
    )
  ).messages.items.find((m: { ciphertext: string | null }) => m.ciphertext);
  const encrypted = {
    ciphertext: sent.ciphertext as string,
    epoch: sent.mls.epoch as number,
    frankingCommitment: sent.mls.frankingCommitment as string,
  };
  // The member's own data export, made in the background: asked for, then waited for.
  await read(people.member, 'mutation { requestDataExport { id } }');
  let memberExportUrl: string | null = null;
  for (let i = 0; i < 400 && !memberExportUrl; i++) {
    const mine = await read(people.member, '{ myDataExports { state downloadUrl } }');
    memberExportUrl =
      (mine.myDataExports as Array<{ state: string; downloadUrl: string | null }>).find(
        (e) => e.state === 'READY',
      )?.downloadUrl ?? null;
    if (!memberExportUrl) await new Promise((r) => setTimeout(r, 50));
  }
  if (!memberExportUrl) throw new Error('the member’s data export was not made within 20 s');
  const png = await makeImage('png', { width: 16, height: 16 });
  const upload = (
    await read(
      people.member,
      'mutation($c: ID!) { createAttachment(input: { conversationId: $c, fileName: "m.txt", contentType: "text/plain" }) { attachmentId uploadToken } }',
      { c: ids.general },
    )
  ).createAttachment as { attachmentId: string; uploadToken: string };
  let avatarUrl = '/api/files/avatars/none.png';
  const avatarOf = (await read(people.member, '{ me { avatarUrl } }')).me.avatarUrl as
    string | null;
  if (avatarOf) avatarUrl = avatarOf;

  const idOf = {} as Record<Caller, string | null>;
  for (const c of CALLERS) idOf[c] = agentOf(c)?.id ?? null;
  idOf.remote = remoteId;

  const form = (parts: Parameters<typeof multipart>[0], url: string) => {
    const m = multipart(parts);
    return { method: 'POST' as const, url, body: m.body, contentType: m.contentType };
  };
  const matrix: MatrixWorld = {
    ...world,
    idOf,
    agentOf,
    otherWorkspace,
    password: DEFAULT_PASSWORD,
    ownerNotification,
    memberDeviceId,
    strangerSpareSession: spare,
    outsiderDmRequest,
    memberExportUrl,
    memberUnsubscribeToken: t.ctx.services.digests.unsubscribeToken(people.member.id),
    encrypted,
    bundleSha256,
    pngBase64: png.toString('base64'),
    assetName: 'app-1234abcd.js',
    get avatarUrl() {
      return avatarUrl;
    },
    uploadRequest: () =>
      form(
        [
          { name: 'upload_token', value: upload.uploadToken },
          { name: 'attachment_id', value: upload.attachmentId },
          { name: 'file', bytes: Buffer.from('matrix\n'), filename: 'm.txt', type: 'text/plain' },
        ],
        '/api/files/upload',
      ),
    avatarRequest: () => form([filePart(png, 'image/png', 'me.png')], '/api/files/avatar'),
    bundleRequest: () => ({
      method: 'POST',
      url: `/api/plugin-bundles/${ids.workspace}`,
      body: Buffer.from(exampleBundleText()),
      contentType: BUNDLE_TYPE,
    }),
    request,
    graphql,
    subscribe,
    close: async () => {
      if (realtime) await (realtime as RealtimeServer).close();
      await world.close();
      fs.rmSync(web, { recursive: true, force: true });
    },
  };
  /** Remembers the avatar an allowed upload stored, for the avatar read route's row. */
  const request0 = matrix.request;
  matrix.request = async (caller, o) => {
    const res = await request0(caller, o);
    if (o.url === '/api/files/avatar' && res.status === 200) {
      const me = await matrix.graphql(caller, '{ me { avatarUrl } }', {});
      avatarUrl = (me.body.data?.me?.avatarUrl as string | undefined) ?? avatarUrl;
    }
    return res;
  };
  return matrix;
}
