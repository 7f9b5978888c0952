import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const keybinds: QueryResolvers['keybinds'] = (_parent, { serverId, ...page }, ctx) =>
  ctx.services.commands.keybinds.list(requireActor(ctx), serverId, page);
