import type { KeysetArgs } from '../../../services/paging/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const keybinds: Resolver<unknown, { serverId?: string | null } & KeysetArgs> = (
  _parent,
  { serverId, ...page },
  ctx,
) => ctx.services.commands.keybinds.list(requireActor(ctx), serverId, page);
