import { optionalActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const rotateIdentityKey: Resolver<
  unknown,
  {
    input: {
      identityPublicKey: string;
      newIdentityPublicKey: string;
      challengeId: string;
      issuedAt: string;
      signature: string;
      newSignature: string;
      revokeDeviceIds?: string[] | null;
      devicePublicKey?: string | null;
      deviceName?: string | null;
      deviceSignature?: string | null;
    };
  }
> = (_parent, { input }, ctx) => ctx.services.keyAuth.rotate(optionalActor(ctx), input);
