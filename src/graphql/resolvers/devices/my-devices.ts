import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const myDevices: QueryResolvers['myDevices'] = (_parent, _args, ctx) =>
  ctx.services.devices.list(requireActor(ctx));
