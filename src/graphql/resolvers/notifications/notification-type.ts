import type { FeedRow } from '../../../services/notifications/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';
import { loadUser } from '../accounts/loaders.js';
import { loadMessage } from '../messages/loaders.js';

type R = Resolver<FeedRow>;

/** Notification fields; the parent is a feed row (listed only where the caller is a member). */
export const Notification = {
  kind: ((n) => n.kind.toUpperCase()) as R,
  serverId: ((n) => n.workspaceId) as R,
  conversation: (async (n, _a, ctx) => {
    try {
      return await ctx.services.conversations.reading.get(requireActor(ctx), n.conversationId);
    } catch {
      return null;
    }
  }) as R,
  message: (async (n, _a, ctx, info) => (await loadMessage(ctx, info, n.messageId)) ?? null) as R,
  actor: (async (n, _a, ctx, info) =>
    n.actorId ? ((await loadUser(ctx, info, n.actorId)) ?? null) : null) as R,
  encrypted: (async (n, _a, ctx, info) => {
    const m = await loadMessage(ctx, info, n.messageId);
    return m ? m.ciphertext !== null || m.text === null : false;
  }) as R,
  createdAt: ((n) => new Date(n.createdAt)) as R,
  read: ((n) => !n.unread) as R,
};
