import type { Resolver } from '../../resolver-types.js';
import { startSessionPayload } from '../accounts/session-payload.js';

interface SignupWithKeyInput {
  username: string;
  displayName?: string | null;
  identityPublicKey: string;
  devicePublicKey: string;
  deviceName?: string | null;
  challengeId: string;
  issuedAt: string;
  identitySignature: string;
  deviceSignature: string;
  inviteToken?: string | null;
  acceptedTermsUrl?: string | null;
  pow?: { challengeId: string; nonce: string } | null;
}

export const signupWithKey: Resolver<unknown, { input: SignupWithKeyInput }> = async (
  _parent,
  { input },
  ctx,
) => {
  const signedIn = await ctx.services.keyAuth.signupWithKey({
    ...input,
    request: {
      inviteToken: input.inviteToken ?? null,
      acceptedTermsUrl: input.acceptedTermsUrl ?? null,
      pow: input.pow ?? null,
    },
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  return startSessionPayload(ctx, signedIn);
};
