import type { Resolver } from '../../resolver-types.js';
import { startSessionPayload } from './session-payload.js';

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
  const signedIn = await ctx.services.registration.signupWithPassword({
    ...input,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  return startSessionPayload(ctx, signedIn);
};
