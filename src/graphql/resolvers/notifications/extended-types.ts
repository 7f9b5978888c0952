import type { ConversationTable } from '../../../db/tables/collaboration.js';
import type { NotificationRuleTable } from '../../../db/tables/notifications.js';
import type { WorkspaceView } from '../../../services/workspaces/index.js';
import { requireActor } from '../../context.js';
import { loader } from '../../loaders.js';
import type { Resolver } from '../../resolver-types.js';

// Fields the notifications area adds to other areas' types (notifications.graphql `extend`).

type C = Resolver<ConversationTable>;

export const Conversation = {
  mentionCount: (async (c, _a, ctx, info) =>
    (await loader<number>(ctx, info, 'mentionCount', (ids) =>
      ctx.services.notifications.unreadCounts(requireActor(ctx), ids),
    ).load(c.id)) ?? 0) as C,
  notificationRule: (async (c, _a, ctx, info) =>
    (await loader<NotificationRuleTable>(ctx, info, 'notificationRule', async (ids) => {
      const rules = await ctx.services.notifications.conversationRules(requireActor(ctx), ids);
      return new Map(ids.flatMap((id, i) => (rules[i] ? [[id, rules[i]] as const] : [])));
    }).load(c.id)) ?? null) as C,
};

export const Mentions = {
  channel: ((m: { channel?: boolean }) => m.channel === true) as Resolver<{ channel?: boolean }>,
};

export const Workspace = {
  channelMentions: (async (w, _a, ctx) =>
    (
      await ctx.services.notifications.channelMentionPolicy(requireActor(ctx), w.id)
    ).toUpperCase()) as Resolver<WorkspaceView>,
};
