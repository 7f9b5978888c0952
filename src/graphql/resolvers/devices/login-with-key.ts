import type { Resolver } from '../../resolver-types.js';
import { startSessionPayload } from '../accounts/session-payload.js';

export const loginWithKey: Resolver<
  unknown,
  {
    proof: {
      challengeId: string;
      deviceId?: string | null;
      devicePublicKey?: string | null;
      issuedAt: string;
      signature: string;
    };
  }
> = async (_parent, { proof }, ctx) => {
  const signedIn = await ctx.services.keyAuth.login({
    proof,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  return startSessionPayload(ctx, signedIn);
};
