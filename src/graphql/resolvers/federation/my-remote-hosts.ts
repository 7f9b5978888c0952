import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const myRemoteHosts: Resolver = (_parent, args, ctx) =>
  ctx.federation.service.remoteHostsOf(requireSession(ctx).accountId, args);
