import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

/**
 * Sends a message. With `attachmentIds`, the files are checked first (so a refused file sends
 * nothing), the text may be empty, and each file is finalized onto the message in the order
 * given before it is answered.
 */
export const sendMessage: MutationResolvers['sendMessage'] = async (_parent, args, ctx) => {
  const actor = requireActor(ctx);
  const { attachmentIds, ...input } = args.input;
  if (!attachmentIds?.length) return ctx.services.messages.sending.send(actor, input);
  const ids = await ctx.services.attachments.checkAttachable(
    actor,
    attachmentIds,
    input.conversationId,
  );
  const message = await ctx.services.messages.sending.send(actor, input, true);
  for (const attachmentId of ids) {
    await ctx.services.attachments.finalize(actor, { attachmentId, messageId: message.id });
  }
  return message;
};
