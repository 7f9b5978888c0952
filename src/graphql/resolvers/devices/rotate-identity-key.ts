import { optionalActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const rotateIdentityKey: MutationResolvers['rotateIdentityKey'] = (
  _parent,
  { input },
  ctx,
) => ctx.services.keyAuth.rotate(optionalActor(ctx), input);
