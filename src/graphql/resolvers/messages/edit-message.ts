import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const editMessage: MutationResolvers['editMessage'] = (_parent, args, ctx) =>
  ctx.services.messages.changes.edit(requireActor(ctx), args.messageId, args.text);
