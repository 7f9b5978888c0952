import Sqlite from 'better-sqlite3';
import pg from 'pg';

import { userTopic } from '../../src/events/catalog.js';
import type { BusEvent } from '../../src/events/bus.js';
import { newId } from '../../src/lib/ids.js';
import type { Agent, TestApp } from '../_util/app.js';

export {
  createWorkspace,
  expectCode,
  inviteAndJoin,
  ok,
  recordEvents,
  setRole,
} from '../workspaces/_helpers.js';

import { createWorkspace, inviteAndJoin, ok } from '../workspaces/_helpers.js';

/** A workspace of `owner` that `members` joined; the id of its first channel (`general`). */
export async function sharedChannel(
  t: TestApp,
  owner: Agent,
  members: Agent[],
  name: string,
): Promise<string> {
  const ws = await createWorkspace(t, owner, name);
  await inviteAndJoin(t, owner, ws.id, members);
  const channels = ok(
    await t.gql('query($s: ID!) { channels(serverId: $s) { id } }', { s: ws.id }, owner),
  ).channels as Array<{ id: string }>;
  return channels[0]!.id;
}

export const CONVERSATION_FIELDS = `id serverId kind name isPrivate encrypted archived memberIds
  memberCount pendingMemberIds isMember mlsGroup unreadCount lastActivityAt createdAt
  lastMessage { id text }`;

export const MESSAGE_FIELDS = `id conversationId serverId author { id username } text isDeleted
  createdAt editedAt threadRootId replyCount lastReplyAt pinned linkPreviews { url }
  forwardedFrom { messageId author { id } createdAt }
  reactions { emoji count reactedByMe } mentions { userIds channelIds here }`;

const CREATE = `mutation($i: CreateConversationInput!) { createConversation(input: $i) {
  reused conversation { ${CONVERSATION_FIELDS} } dmRequestsSent { id state to { id } } } }`;

/** createConversation as `agent`; the raw response. */
export const createConversation = (
  t: TestApp,
  agent: Agent,
  memberIds: string[],
  extra: { name?: string; encrypted?: boolean } = {},
) => t.gql(CREATE, { i: { memberIds, ...extra } }, agent);

/** A conversation that must be created; its payload. */
export async function conversationOf(
  t: TestApp,
  agent: Agent,
  others: Agent[],
  extra: { name?: string; encrypted?: boolean } = {},
) {
  return ok(
    await createConversation(
      t,
      agent,
      others.map((o) => o.id),
      extra,
    ),
  ).createConversation as {
    reused: boolean;
    conversation: Record<string, any>;
    dmRequestsSent: Array<{ id: string; state: string; to: { id: string } }>;
  };
}

const SEND = `mutation($i: SendMessageInput!) { sendMessage(input: $i) { ${MESSAGE_FIELDS} } }`;

export const sendRaw = (
  t: TestApp,
  agent: Agent,
  conversationId: string,
  text: string,
  threadRootId?: string,
) => t.gql(SEND, { i: { conversationId, text, threadRootId } }, agent);

/** Sends a message that must be accepted; the message. */
export async function send(
  t: TestApp,
  agent: Agent,
  conversationId: string,
  text: string,
  threadRootId?: string,
): Promise<Record<string, any>> {
  return ok(await sendRaw(t, agent, conversationId, text, threadRootId)).sendMessage;
}

/** Gives an account a device set up for encryption (a live device with a key package). */
export async function giveDevice(t: TestApp, accountId: string) {
  const now = t.ctx.clock.now().getTime();
  await t.ctx.db.kysely
    .insertInto('device')
    .values({
      id: newId(),
      accountId,
      publicKey: `pk-${newId()}`,
      name: 'test device',
      createdAt: now,
      lastUsedAt: null,
      revokedAt: null,
      keyPackage: 'a2V5LXBhY2thZ2U',
      keyPackageAt: now,
    })
    .execute();
}

/** Records the events published to one person's user topic. */
export function recordUser(t: TestApp, accountId: string) {
  const events: BusEvent[] = [];
  const stop = t.ctx.bus.subscribe(userTopic(accountId), (e) => events.push(e));
  return {
    events,
    stop,
    ofType: (type: string) => events.filter((e) => e.type === type),
    clear: () => events.splice(0, events.length),
  };
}

/**
 * Counts the SQL statements the app runs while `fn` runs (both drivers), to show a page costs
 * the same number of queries whatever its length.
 */
export async function countQueries(fn: () => Promise<unknown>): Promise<number> {
  return (await recordQueries(fn)).filter((text) => !BACKGROUND.test(text)).length;
}

/**
 * Tables only the server's periodic work reads on its own (the event outbox's drainer, the
 * federation outboxes, the server key refresh, the address block list refresh): a tick of theirs that falls inside
 * the measured window is not the measured request's cost.
 */
export const BACKGROUND =
  /"(event_outbox|s2s_outbox|remote_event|remote_event_delivery|relay_event|server_key|server_key_log|ip_block)"/;

/** The SQL text of every statement the app runs while `fn` runs (both drivers), in order. */
export async function recordQueries(fn: () => Promise<unknown>): Promise<string[]> {
  const texts: string[] = [];
  // Statements are prepared once and cached (src/db/database.ts): count executions, not prepares.
  const probe = new Sqlite(':memory:');
  const statementProto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<
    'all' | 'run',
    (...a: unknown[]) => unknown
  >;
  probe.close();
  const pgProto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const { all, run } = statementProto;
  const query = pgProto.query;
  statementProto.all = function (this: { source: string }, ...a: unknown[]) {
    texts.push(this.source);
    return all.apply(this, a);
  };
  statementProto.run = function (this: { source: string }, ...a: unknown[]) {
    texts.push(this.source);
    return run.apply(this, a);
  };
  pgProto.query = function (this: unknown, ...a: unknown[]) {
    const first = a[0] as string | { text?: string };
    texts.push(typeof first === 'string' ? first : String(first?.text ?? ''));
    return query.apply(this, a);
  };
  try {
    await fn();
  } finally {
    statementProto.all = all;
    statementProto.run = run;
    pgProto.query = query;
  }
  return texts;
}
