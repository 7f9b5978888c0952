import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const deleteAttachment: MutationResolvers['deleteAttachment'] = (_parent, args, ctx) =>
  ctx.services.attachments.delete(requireActor(ctx), args.attachmentId);
