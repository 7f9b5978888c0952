import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const finalizeAttachment: MutationResolvers['finalizeAttachment'] = (_parent, args, ctx) =>
  ctx.services.attachments.finalize(requireActor(ctx), args.input);
