import type { Resolver } from '../../resolver-types.js';

interface Args {
  input: {
    username: string;
    password: string;
    displayName?: string | null;
    email?: string | null;
    inviteToken?: string | null;
    acceptedTermsUrl?: string | null;
    pow?: { challengeId: string; nonce: string } | null;
  };
}

export const signupWithInvite: Resolver<unknown, Args> = async (_parent, { input }, ctx) => {
  const { account, session, serverId } = await ctx.app.services.registration.signupWithPassword({
    ...input,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  ctx.cookies.startSession(session);
  return {
    user: { ...account, viewerIsSelf: true },
    csrfToken: session.csrfToken,
    expiresAt: session.expiresAt,
    serverId,
  };
};
