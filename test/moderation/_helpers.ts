import { runCli } from '../../src/cli/run.js';
import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { newId } from '../../src/lib/ids.js';
import type { Agent, TestApp } from '../_util/app.js';

/** Runs the real CLI against the test app's database; `json` is the parsed standard output. */
export async function cli(t: TestApp, argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    out: (s) => (out += s),
    err: (s) => (err += s),
    readStdin: async () => '',
    env: { ...t.database.env, SVC_LOG_LEVEL: 'warn' },
  });
  let json: any = null;
  try {
    json = out ? JSON.parse(out) : null;
  } catch {
    json = null;
  }
  /** The JSON log lines the CLI wrote to standard error. */
  const logLines = err
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code, out, err, json, logLines };
}

/** The GraphQL error code of the first error, or undefined. */
export const codeOf = (res: { body: { errors?: Array<{ extensions?: Record<string, any> }> } }) =>
  res.body.errors?.[0]?.extensions?.code as string | undefined;

// Collaboration rows written straight to the database: these tests are about moderation, and
// need only that a workspace, a channel, a DM and messages exist.

export async function seedWorkspace(
  t: TestApp,
  owner: Agent,
  opts: { name?: string; description?: string | null } = {},
) {
  const now = t.ctx.clock.now().getTime();
  const id = newId();
  const channelId = newId();
  const db = t.ctx.db.kysely;
  await db
    .insertInto('workspace')
    .values({
      id,
      name: opts.name ?? `ws-${id.slice(-6)}`,
      description: opts.description ?? null,
      ownerId: owner.id,
      isDirect: 0,
      createdAt: now,
      updatedAt: now,
    })
    .execute();
  await db
    .insertInto('workspace_member')
    .values({
      workspaceId: id,
      accountId: owner.id,
      role: 'owner',
      joinedAt: now,
      timedOutUntil: null,
    })
    .execute();
  await db
    .insertInto('conversation')
    .values({
      id: channelId,
      workspaceId: id,
      kind: 'channel',
      name: 'general',
      topic: null,
      isPrivate: 0,
      encrypted: 0,
      archivedAt: null,
      createdBy: owner.id,
      createdAt: now,
      lastActivityAt: now,
    })
    .execute();
  await db
    .insertInto('conversation_member')
    .values({
      conversationId: channelId,
      accountId: owner.id,
      state: 'member',
      joinedAt: now,
      lastReadAt: null,
      lastReadMessageId: null,
    })
    .execute();
  return { id, channelId };
}

export async function seedMember(
  t: TestApp,
  workspaceId: string,
  agent: Agent,
  role: 'moderator' | 'member' | 'guest',
  channelIds: string[] = [],
) {
  const now = t.ctx.clock.now().getTime();
  await t.ctx.db.kysely
    .insertInto('workspace_member')
    .values({ workspaceId, accountId: agent.id, role, joinedAt: now, timedOutUntil: null })
    .execute();
  for (const conversationId of channelIds) await seedConversationMember(t, conversationId, agent);
}

export async function seedConversationMember(t: TestApp, conversationId: string, agent: Agent) {
  await t.ctx.db.kysely
    .insertInto('conversation_member')
    .values({
      conversationId,
      accountId: agent.id,
      state: 'member',
      joinedAt: t.ctx.clock.now().getTime(),
      lastReadAt: null,
      lastReadMessageId: null,
    })
    .execute();
}

/** A conversation in a workspace (private channel) or in the direct space (DM). */
export async function seedConversation(
  t: TestApp,
  opts: { workspaceId?: string; kind: 'channel' | 'direct'; isPrivate?: boolean; members: Agent[] },
) {
  const now = t.ctx.clock.now().getTime();
  const id = newId();
  await t.ctx.db.kysely
    .insertInto('conversation')
    .values({
      id,
      workspaceId: opts.workspaceId ?? DIRECT_SPACE_ID,
      kind: opts.kind,
      name: opts.kind === 'channel' ? `c-${id.slice(-6)}` : null,
      topic: null,
      isPrivate: opts.isPrivate ? 1 : 0,
      encrypted: 0,
      archivedAt: null,
      createdBy: opts.members[0]!.id,
      createdAt: now,
      lastActivityAt: now,
    })
    .execute();
  for (const m of opts.members) await seedConversationMember(t, id, m);
  return id;
}

export async function seedMessage(t: TestApp, conversationId: string, author: Agent, text: string) {
  const conv = await t.ctx.db.kysely
    .selectFrom('conversation')
    .select('workspaceId')
    .where('id', '=', conversationId)
    .executeTakeFirstOrThrow();
  const id = newId();
  await t.ctx.db.kysely
    .insertInto('message')
    .values({
      id,
      conversationId,
      workspaceId: conv.workspaceId,
      authorId: author.id,
      text,
      ciphertext: null,
      threadRootId: null,
      forwardedFromId: null,
      createdAt: t.ctx.clock.now().getTime(),
      editedAt: null,
      deletedAt: null,
      deletedBy: null,
      replyCount: 0,
      lastReplyAt: null,
      mentions: null,
    })
    .execute();
  return id;
}

export async function auditRows(t: TestApp) {
  return t.ctx.db.kysely
    .selectFrom('audit_log')
    .selectAll()
    .orderBy('createdAt')
    .orderBy('id')
    .execute();
}
