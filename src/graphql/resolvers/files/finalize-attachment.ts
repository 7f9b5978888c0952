import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const finalizeAttachment: Resolver<
  unknown,
  { input: { attachmentId: string; messageId: string } }
> = (_parent, args, ctx) => ctx.services.attachments.finalize(requireActor(ctx), args.input);
