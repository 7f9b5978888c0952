import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const createAttachment: MutationResolvers['createAttachment'] = (_parent, args, ctx) =>
  ctx.services.attachments.create(requireActor(ctx), args.input);
