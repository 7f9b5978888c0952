import type { NotificationRuleView } from '../../../services/notifications/views.js';
import { requireActor } from '../../context.js';
import { loader } from '../../loaders.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';
import { enumName } from '../../resolver-types.js';

// Fields the notifications area adds to other areas' types (notifications.graphql `extend`).

export const Conversation: TypeResolvers<'Conversation'> = {
  mentionCount: async (c, _a, ctx, info) =>
    (await loader<number>(ctx, info, 'mentionCount', (ids) =>
      ctx.services.notifications.unreadCounts(requireActor(ctx), ids),
    ).load(c.id)) ?? 0,
  notificationRule: async (c, _a, ctx, info) =>
    (await loader<NotificationRuleView>(ctx, info, 'notificationRule', async (ids) => {
      const rules = await ctx.services.notifications.conversationRules(requireActor(ctx), ids);
      return new Map(ids.flatMap((id, i) => (rules[i] ? [[id, rules[i]] as const] : [])));
    }).load(c.id)) ?? null,
};

export const Mentions: TypeResolvers<'Mentions'> = {
  channel: (m: { channel?: boolean }) => m.channel === true,
};

export const Workspace: TypeResolvers<'Workspace'> = {
  channelMentions: async (w, _a, ctx) =>
    enumName(await ctx.services.notifications.channelMentionPolicy(requireActor(ctx), w.id)),
};
