import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const instanceInvites: Resolver = (_parent, _args, ctx) =>
  ctx.services.registration.listInstanceInvites(requireActor(ctx));
