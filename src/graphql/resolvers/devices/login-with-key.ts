import type { Resolver } from '../../resolver-types.js';

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
  const { account, session } = await ctx.app.services.keyAuth.login({
    proof,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  ctx.cookies.startSession(session);
  return {
    user: { ...account, viewerIsSelf: true },
    csrfToken: session.csrfToken,
    expiresAt: session.expiresAt,
    serverId: null,
  };
};
