import type { GraphQLResolveInfo } from 'graphql';

import type {
  DmRequestTable,
  MessageEditTable,
  MessageTable,
} from '../../../db/tables/collaboration.js';
import type { AccountView } from '../../../services/accounts/account-service.js';
import { requireActor, type GraphqlContext } from '../../context.js';

// Per-request batching for the fields of a page (no N+1): every key asked for while graphql-js
// resolves one level of a list is loaded in one query. Loaders are kept per request and per root
// field, so a mutation later in the same request never reads what an earlier one cached.

type BatchFn<V> = (keys: string[]) => Promise<Map<string, V>>;

class Loader<V> {
  private readonly cache = new Map<string, Promise<V | undefined>>();
  private queue: Array<{
    key: string;
    resolve: (v: V | undefined) => void;
    reject: (e: unknown) => void;
  }> = [];

  constructor(private readonly batch: BatchFn<V>) {}

  load(key: string): Promise<V | undefined> {
    const hit = this.cache.get(key);
    if (hit) return hit;
    const p = new Promise<V | undefined>((resolve, reject) => {
      if (this.queue.length === 0) {
        // After the promises graphql-js is resolving now have settled, like DataLoader.
        void Promise.resolve().then(() => process.nextTick(() => this.dispatch()));
      }
      this.queue.push({ key, resolve, reject });
    });
    this.cache.set(key, p);
    return p;
  }

  private dispatch() {
    const queue = this.queue;
    this.queue = [];
    const keys = [...new Set(queue.map((q) => q.key))];
    this.batch(keys).then(
      (map) => queue.forEach((q) => q.resolve(map.get(q.key))),
      (err) => queue.forEach((q) => q.reject(err)),
    );
  }
}

const perRequest = new WeakMap<GraphqlContext, Map<string, Loader<unknown>>>();

function rootKey(info: GraphQLResolveInfo): string {
  let path = info.path;
  while (path.prev) path = path.prev;
  return String(path.key);
}

function loader<V>(
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  name: string,
  batch: BatchFn<V>,
): Loader<V> {
  let map = perRequest.get(ctx);
  if (!map) perRequest.set(ctx, (map = new Map()));
  const key = `${rootKey(info)}\u0000${name}`;
  let l = map.get(key) as Loader<V> | undefined;
  if (!l) {
    l = new Loader(batch);
    map.set(key, l as unknown as Loader<unknown>);
  }
  return l;
}

const group = <T, K extends keyof T>(rows: T[], key: K) => {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const k = String(r[key]);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
};

// ---- accounts and messages

export const loadUser = (ctx: GraphqlContext, info: GraphQLResolveInfo, id: string) =>
  loader<AccountView>(ctx, info, 'user', async (ids) => {
    const rows = await ctx.app.services.messages.accountsByIds(ids);
    return new Map(rows.map((r) => [r.id, r]));
  }).load(id);

export const loadMessage = (ctx: GraphqlContext, info: GraphQLResolveInfo, id: string) =>
  loader<MessageTable>(ctx, info, 'message', async (ids) => {
    const rows = await ctx.app.services.messages.messagesByIds(ids);
    return new Map(rows.map((r) => [r.id, r]));
  }).load(id);

export interface ReactionGroupView {
  emoji: string;
  count: number;
  reactedByMe: boolean;
}

export const loadReactions = (ctx: GraphqlContext, info: GraphQLResolveInfo, messageId: string) =>
  loader<ReactionGroupView[]>(ctx, info, 'reactions', async (ids) => {
    const rows = await ctx.app.services.messages.reactionGroups(requireActor(ctx), ids);
    const out = new Map<string, ReactionGroupView[]>();
    for (const [id, list] of group(rows, 'messageId')) {
      out.set(
        id,
        list.map((r) => ({
          emoji: r.emoji,
          count: Number(r.count),
          reactedByMe: Number(r.mine) === 1,
        })),
      );
    }
    return out;
  }).load(messageId);

export const loadPinned = (ctx: GraphqlContext, info: GraphQLResolveInfo, messageId: string) =>
  loader<boolean>(ctx, info, 'pinned', async (ids) => {
    const pinned = await ctx.app.services.messages.pinnedAmong(ids);
    return new Map(ids.map((id) => [id, pinned.has(id)]));
  }).load(messageId);

export const loadEdits = (ctx: GraphqlContext, info: GraphQLResolveInfo, messageId: string) =>
  loader<MessageEditTable[]>(ctx, info, 'edits', async (ids) =>
    group(await ctx.app.services.messages.editsOf(ids), 'messageId'),
  ).load(messageId);

// ---- conversations

export interface MemberView {
  accountId: string;
  state: 'member' | 'pending';
}

export const loadMembers = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  conversationId: string,
) =>
  loader<MemberView[]>(ctx, info, 'members', async (ids) =>
    group(await ctx.app.services.conversations.membersOf(ids), 'conversationId'),
  ).load(conversationId);

export const loadUnread = (ctx: GraphqlContext, info: GraphQLResolveInfo, conversationId: string) =>
  loader<number>(ctx, info, 'unread', (ids) =>
    ctx.app.services.conversations.unreadCounts(requireActor(ctx), ids),
  ).load(conversationId);

export const loadLastMessage = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  conversationId: string,
) =>
  loader<MessageTable>(ctx, info, 'lastMessage', async (ids) => {
    const rows = await ctx.app.services.conversations.lastMessages(ids);
    return new Map(rows.map((r) => [r.conversationId, r]));
  }).load(conversationId);

export const loadDmRequests = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  conversationId: string,
) =>
  loader<DmRequestTable[]>(ctx, info, 'dmRequests', async (ids) =>
    group(await ctx.app.services.conversations.dmRequestsFor(ids), 'conversationId'),
  ).load(conversationId);

export const loadPreview = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  conversationId: string,
) =>
  loader<MessageTable[]>(ctx, info, 'preview', (ids) => ctx.app.services.dm.previews(ids)).load(
    conversationId,
  );
