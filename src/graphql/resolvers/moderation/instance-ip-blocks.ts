import type { KeysetArgs } from '../../../services/paging/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const instanceIpBlocks: Resolver<unknown, KeysetArgs> = (_parent, args, ctx) =>
  ctx.services.ipBlocks.list(requireActor(ctx), args);
