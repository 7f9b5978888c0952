import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const editMessage: Resolver<unknown, { messageId: string; text: string }> = (
  _parent,
  args,
  ctx,
) => ctx.app.services.messages.edit(requireSession(ctx).accountId, args.messageId, args.text);
