import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const myKeyIdentity: QueryResolvers['myKeyIdentity'] = (_parent, _args, ctx) =>
  ctx.services.keyAuth.identityOf(requireActor(ctx));
