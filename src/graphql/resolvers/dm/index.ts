import type { Resolvers } from '../../resolver-types.js';

import { acceptDmRequest } from './accept-dm-request.js';
import { blockUser } from './block-user.js';
import { blockedUsers } from './blocked-users.js';
import { declineDmRequest } from './decline-dm-request.js';
import { DmRequest } from './dm-request-type.js';
import { dmRequests } from './dm-requests.js';
import { myDmSettings } from './my-dm-settings.js';
import { unblockUser } from './unblock-user.js';
import { updateDmSettings } from './update-dm-settings.js';

export const dmResolvers: Resolvers = {
  Query: { myDmSettings, dmRequests, blockedUsers },
  Mutation: { updateDmSettings, acceptDmRequest, declineDmRequest, blockUser, unblockUser },
  DmRequest,
};
