import { requireSession } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const myRemoteHosts: QueryResolvers['myRemoteHosts'] = (_parent, args, ctx) =>
  ctx.federation.service.remoteHostsOf(requireSession(ctx).accountId, args);
