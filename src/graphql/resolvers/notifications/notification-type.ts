import { requireActor } from '../../context.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';
import { loadUser } from '../accounts/loaders.js';
import { loadMessage } from '../messages/loaders.js';
import { enumName } from '../../resolver-types.js';

/** Notification fields; the parent is a feed row (listed only where the caller is a member). */
export const Notification: TypeResolvers<'Notification'> = {
  kind: (n) => enumName(n.kind),
  serverId: (n) => n.workspaceId,
  conversation: async (n, _a, ctx) => {
    try {
      return await ctx.services.conversations.reading.get(requireActor(ctx), n.conversationId);
    } catch {
      return null;
    }
  },
  message: async (n, _a, ctx, info) => (await loadMessage(ctx, info, n.messageId)) ?? null,
  actor: async (n, _a, ctx, info) =>
    n.actorId ? ((await loadUser(ctx, info, n.actorId)) ?? null) : null,
  encrypted: async (n, _a, ctx, info) => {
    const m = await loadMessage(ctx, info, n.messageId);
    return m ? m.ciphertext !== null || m.text === null : false;
  },
  createdAt: (n) => new Date(n.createdAt),
  read: (n) => !n.unread,
};
