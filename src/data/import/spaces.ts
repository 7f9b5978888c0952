import type { Executor } from '../../db/database.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type { WorkspaceRole } from '../../db/tables/workspaces.js';
import { newId } from '../../lib/ids.js';
import { addConversationMembers, findChannelByName, insertChannel, claimDirectPair, findDirectPair, insertConversation } from '../../services/conversations/index.js';
import { normalizeChannelName } from '../../services/channels/index.js';
import { findMembers, insertMember, insertWorkspace } from '../../services/workspaces/index.js';

import { clip, type Problem, type SourceConversation, type SourceWorkspace } from './model.js';

// Workspaces, their members and their conversations, each written with its import-map row by
// the caller (writer.ts) in one transaction per item, so a run cut short resumes after the last
// item it finished.

const WORKSPACE_NAME_MAX = 80;
const WORKSPACE_DESCRIPTION_MAX = 1000;
const TOPIC_MAX = 250;

/** The owner of a new workspace: the one given, else the source's first owner, moderator, member. */
export function chooseOwner(
  ws: SourceWorkspace,
  ids: ReadonlyMap<string, string>,
  given: string | null,
): string | null {
  if (given) return given;
  for (const wanted of ['owner', 'moderator', 'member', 'guest'] as const) {
    for (const [key, role] of ws.members) if (role === wanted && ids.has(key)) return ids.get(key)!;
  }
  return null;
}

/** Creates a workspace owned by `ownerId`, with every member of `members` in their role. */
export async function createWorkspace(
  db: Executor,
  ws: SourceWorkspace,
  ownerId: string,
  members: ReadonlyMap<string, WorkspaceRole>,
  now: number,
): Promise<string> {
  const id = newId();
  await insertWorkspace(db, {
    id,
    name: clip(ws.name.trim() || 'Imported', WORKSPACE_NAME_MAX),
    description: ws.description ? clip(ws.description, WORKSPACE_DESCRIPTION_MAX) : null,
    ownerId,
    isDirect: 0,
    createdAt: ws.createdAt || now,
    updatedAt: now,
  });
  await addWorkspaceMembers(db, id, new Map([...members, [ownerId, 'owner']]), ws.createdAt || now);
  return id;
}

/** Adds the accounts of `members` not in the workspace yet; returns how many. */
export async function addWorkspaceMembers(
  db: Executor,
  workspaceId: string,
  members: ReadonlyMap<string, WorkspaceRole>,
  joinedAt: number,
): Promise<number> {
  const ids = [...members.keys()];
  const present = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    for (const m of await findMembers(db, workspaceId, ids.slice(i, i + 500))) {
      present.add(m.accountId);
    }
  }
  let added = 0;
  for (const [accountId, role] of members) {
    if (present.has(accountId)) continue;
    await insertMember(db, { workspaceId, accountId, role, joinedAt, timedOutUntil: null });
    added++;
  }
  return added;
}

/** A channel name of the workspace not taken yet: `name`, `name-2`, ... */
async function freeChannelName(db: Executor, workspaceId: string, name: string): Promise<string> {
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? '' : `-${n}`;
    const candidate = clip(name, 80 - suffix.length) + suffix;
    if (!(await findChannelByName(db, workspaceId, candidate))) return candidate;
  }
}

/** The channel name svc would take for `raw`, or a problem to report. */
export function channelName(c: SourceConversation): string | Problem {
  const raw = (c.name ?? '').replace(/[^\p{L}\p{N}_\s-]+/gu, '-');
  try {
    return normalizeChannelName(clip(raw, 80));
  } catch (err) {
    return { ...c.place, message: `channel "${c.name}": ${(err as Error).message}` };
  }
}

/**
 * Creates a conversation and its memberships. A direct conversation two people have already is
 * theirs (svc keeps one per pair), so it is returned instead of a new one.
 */
export async function createConversation(
  db: Executor,
  c: SourceConversation,
  workspaceId: string | null,
  name: string | null,
  memberIds: readonly string[],
  createdBy: string,
): Promise<{ id: string; created: boolean }> {
  const base = {
    topic: c.topic ? clip(c.topic.replace(/\p{Cc}+/gu, ' ').trim(), TOPIC_MAX) || null : null,
    encrypted: 0,
    archivedAt: c.archived ? c.createdAt : null,
    createdBy,
    createdAt: c.createdAt,
    lastActivityAt: c.createdAt,
  };
  if (c.kind === 'channel') {
    const id = newId();
    await insertChannel(db, {
      ...base,
      id,
      workspaceId: workspaceId!,
      kind: 'channel',
      name: await freeChannelName(db, workspaceId!, name!),
      isPrivate: c.isPrivate ? 1 : 0,
    });
    await addConversationMembers(
      db,
      memberIds.map((accountId) => ({ conversationId: id, accountId })),
      c.createdAt,
    );
    return { id, created: true };
  }
  if (c.kind === 'direct') {
    const [a, b = a] = [...memberIds].sort() as [string, string?];
    const pairKey = `${a}:${b}:p`;
    const existing = await findDirectPair(db, pairKey);
    if (existing) return { id: existing.conversationId, created: false };
    const id = newId();
    await insertConversation(db, {
      ...base,
      id,
      workspaceId: DIRECT_SPACE_ID,
      kind: 'direct',
      name: null,
      isPrivate: 1,
      archivedAt: null,
    });
    await claimDirectPair(db, pairKey, id);
    await addConversationMembers(
      db,
      memberIds.map((accountId) => ({ conversationId: id, accountId })),
      c.createdAt,
    );
    return { id, created: true };
  }
  const id = newId();
  await insertConversation(db, {
    ...base,
    id,
    workspaceId: DIRECT_SPACE_ID,
    kind: 'group',
    name: name ? clip(name, 80) : null,
    isPrivate: 1,
    archivedAt: null,
  });
  await addConversationMembers(
    db,
    memberIds.map((accountId) => ({ conversationId: id, accountId })),
    c.createdAt,
  );
  return { id, created: true };
}
