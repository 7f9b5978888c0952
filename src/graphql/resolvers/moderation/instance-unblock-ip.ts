import { actorId } from '../../../services/moderation/actor.js';
import type { Resolver } from '../../resolver-types.js';

import { assertOperator } from './assert-operator.js';

export const instanceUnblockIp: Resolver<unknown, { cidr: string }> = (_parent, args, ctx) =>
  ctx.app.services.ipBlocks.unblock(args.cidr, actorId(assertOperator(ctx)));
