import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const enrollIdentityKey: Resolver<
  unknown,
  {
    input: {
      identityPublicKey: string;
      devicePublicKey: string;
      deviceName?: string | null;
      challengeId: string;
      issuedAt: string;
      identitySignature: string;
      deviceSignature: string;
    };
  }
> = async (_parent, { input }, ctx) => {
  const { account, device, identity } = await ctx.services.keyAuth.enroll(requireActor(ctx), input);
  return {
    user: { ...account, viewerIsSelf: true },
    device: { ...device, current: true },
    keyIdentity: identity,
  };
};
