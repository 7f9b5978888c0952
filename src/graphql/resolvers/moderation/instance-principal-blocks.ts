import type { KeysetArgs } from '../../../services/paging/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const instancePrincipalBlocks: Resolver<unknown, KeysetArgs> = (_parent, args, ctx) =>
  ctx.services.moderation.blocks.list(requireActor(ctx), args);
