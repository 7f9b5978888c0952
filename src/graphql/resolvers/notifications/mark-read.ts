import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const markNotificationRead: Resolver<unknown, { id: string }> = (_parent, { id }, ctx) =>
  ctx.services.notifications.markRead(requireActor(ctx), id);

export const markConversationNotificationsRead: Resolver<unknown, { conversationId: string }> = (
  _parent,
  { conversationId },
  ctx,
) => ctx.services.notifications.markConversationRead(requireActor(ctx), conversationId);

export const markAllNotificationsRead: Resolver = (_parent, _args, ctx) =>
  ctx.services.notifications.markAllRead(requireActor(ctx));
