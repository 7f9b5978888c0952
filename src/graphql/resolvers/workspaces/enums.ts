/** Internal values of the workspace enums (the services use lower-case role names). */
export const WorkspaceRole = {
  OWNER: 'owner',
  MODERATOR: 'moderator',
  MEMBER: 'member',
  GUEST: 'guest',
};

export const InviteState = {
  ACTIVE: 'active',
  EXPIRED: 'expired',
  REVOKED: 'revoked',
  USED_UP: 'usedUp',
};
