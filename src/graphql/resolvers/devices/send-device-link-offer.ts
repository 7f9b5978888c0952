import type { Resolver } from '../../resolver-types.js';

export const sendDeviceLinkOffer: Resolver<
  unknown,
  {
    input: {
      username: string;
      devicePublicKey: string;
      deviceName?: string | null;
      challengeId: string;
      issuedAt: string;
      signature: string;
    };
  }
> = (_parent, { input }, ctx) => ctx.services.devices.sendLinkOffer(input);
