import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const myDevices: Resolver = (_parent, _args, ctx) =>
  ctx.services.devices.list(requireActor(ctx));
