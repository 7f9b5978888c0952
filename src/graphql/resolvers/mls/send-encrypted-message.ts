import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const sendEncryptedMessage: Resolver<
  unknown,
  {
    input: {
      conversationId: string;
      incarnation: number;
      epoch: number;
      ciphertext: string;
      frankingCommitment: string;
      threadRootId?: string | null;
    };
  }
> = (_p, args, ctx) => ctx.services.mls.messages.sendEncrypted(requireActor(ctx), args.input);
