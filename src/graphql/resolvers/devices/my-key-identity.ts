import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const myKeyIdentity: Resolver = (_parent, _args, ctx) =>
  ctx.services.keyAuth.identityOf(requireActor(ctx));
