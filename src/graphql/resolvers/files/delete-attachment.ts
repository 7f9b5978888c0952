import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const deleteAttachment: Resolver<unknown, { attachmentId: string }> = (_parent, args, ctx) =>
  ctx.services.attachments.delete(requireActor(ctx), args.attachmentId);
