import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const createAttachment: Resolver<
  unknown,
  { input: { conversationId: string; fileName: string; contentType?: string | null } }
> = (_parent, args, ctx) => ctx.services.attachments.create(requireActor(ctx), args.input);
