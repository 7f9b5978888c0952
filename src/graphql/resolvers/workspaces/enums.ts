import type { EnumResolvers } from '../../generated/resolver-types.js';
/** Internal values of the workspace enums (the services use lower-case role names). */
export const WorkspaceRole: EnumResolvers<'WorkspaceRole'> = {
  OWNER: 'owner',
  MODERATOR: 'moderator',
  MEMBER: 'member',
  GUEST: 'guest',
};

export const InviteState: EnumResolvers<'InviteState'> = {
  ACTIVE: 'active',
  EXPIRED: 'expired',
  REVOKED: 'revoked',
  USED_UP: 'usedUp',
};
