import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const markNotificationRead: MutationResolvers['markNotificationRead'] = (
  _parent,
  { id },
  ctx,
) => ctx.services.notifications.markRead(requireActor(ctx), id);

export const markConversationNotificationsRead: MutationResolvers['markConversationNotificationsRead'] =
  (_parent, { conversationId }, ctx) =>
    ctx.services.notifications.markConversationRead(requireActor(ctx), conversationId);

export const markAllNotificationsRead: MutationResolvers['markAllNotificationsRead'] = (
  _parent,
  _args,
  ctx,
) => ctx.services.notifications.markAllRead(requireActor(ctx));
