import type { Resolvers } from '../../resolver-types.js';

import { approveDeviceLink } from './approve-device-link.js';
import { cancelDeviceLink } from './cancel-device-link.js';
import { Device } from './device.js';
import { deviceLinkOfferStatus } from './device-link-offer-status.js';
import { deviceLinkOffers } from './device-link-offers.js';
import { enrollIdentityKey } from './enroll-identity-key.js';
import { keyLoginChallenge } from './key-login-challenge.js';
import { loginWithKey } from './login-with-key.js';
import { myDevices } from './my-devices.js';
import { myKeyIdentity } from './my-key-identity.js';
import { publishKeyPackage } from './publish-key-package.js';
import { revokeDevice } from './revoke-device.js';
import { rotateIdentityKey } from './rotate-identity-key.js';
import { sendDeviceLinkOffer } from './send-device-link-offer.js';
import { signupWithKey } from './signup-with-key.js';

export const deviceResolvers: Resolvers = {
  Query: { myDevices, myKeyIdentity, deviceLinkOffers, deviceLinkOfferStatus },
  Mutation: {
    keyLoginChallenge,
    loginWithKey,
    signupWithKey,
    sendDeviceLinkOffer,
    approveDeviceLink,
    cancelDeviceLink,
    revokeDevice,
    enrollIdentityKey,
    rotateIdentityKey,
    publishKeyPackage,
  },
  Device,
};
