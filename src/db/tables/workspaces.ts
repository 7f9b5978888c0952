// Row types of the tables services/workspaces owns (db/table-owners.ts): workspaces, their
// members and invites. Timestamps in ms; booleans 0/1.

export type WorkspaceRole = 'owner' | 'moderator' | 'member' | 'guest';

export interface WorkspaceTable {
  id: string;
  name: string;
  description: string | null;
  /** Null only for the direct space. */
  ownerId: string | null;
  /** 1 for the one direct space that holds direct and group conversations. */
  isDirect: number;
  createdAt: number;
  updatedAt: number;
}

export interface WorkspaceMemberTable {
  workspaceId: string;
  accountId: string;
  role: WorkspaceRole;
  joinedAt: number;
  /** A timeout set by a Moderator or the owner: no writes until then. */
  timedOutUntil: number | null;
}

export interface WorkspaceInviteTable {
  id: string;
  workspaceId: string;
  /** SHA-256 of the invite token, base64url. */
  tokenHash: string;
  createdBy: string;
  createdAt: number;
  expiresAt: number | null;
  maxUses: number | null;
  uses: number;
  revokedAt: number | null;
  email: string | null;
  /** Role given on joining: `member` or `guest`. */
  role: 'member' | 'guest';
  /** JSON array of channel ids a guest is given. */
  guestChannelIds: string | null;
}
