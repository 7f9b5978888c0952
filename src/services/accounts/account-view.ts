/** An account as the services hand it out (the GraphQL `User` type takes it). */
export interface AccountView {
  id: string;
  username: string;
  displayName: string | null;
  email: string | null;
  createdAt: number;
  isOperator: boolean;
  deletionScheduledFor: number | null;
  homeServer: string | null;
  /** `avatars/<sha256>.<ext>` under /api/files/, or null (accounts/avatars.ts). */
  avatarPath: string | null;
}

/** The account columns the view is made from, whichever query read them. */
export interface AccountViewRow {
  id: string;
  username: string;
  displayName: string | null;
  email: string | null;
  createdAt: number;
  isOperator: number;
  deletionScheduledFor: number | null;
  homeServer: string | null;
  avatarPath: string | null;
}

/** The one mapping from account columns to `AccountView`. */
export function toAccountView(row: AccountViewRow): AccountView {
  return {
    id: row.id,
    username: row.username,
    displayName: row.displayName,
    email: row.email,
    createdAt: row.createdAt,
    isOperator: row.isOperator === 1,
    deletionScheduledFor: row.deletionScheduledFor,
    homeServer: row.homeServer,
    avatarPath: row.avatarPath,
  };
}
