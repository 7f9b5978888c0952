import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const editMessage: Resolver<unknown, { messageId: string; text: string }> = (
  _parent,
  args,
  ctx,
) => ctx.services.messages.changes.edit(requireActor(ctx), args.messageId, args.text);
