import type { Role } from '../../auth/policy.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import { validation } from '../../errors.js';
import type { CursorPosition } from '../../lib/cursor.js';
import { toAccountView, type AccountView } from '../accounts/index.js';

import type { MemberPageRow, WorkspaceViewRow } from './queries.js';

// The views the workspace service answers, their mapping from rows, and input checks.

/** A workspace as the caller sees it. */
export interface WorkspaceView {
  id: string;
  name: string;
  description: string | null;
  ownerId: string | null;
  isDirect: boolean;
  createdAt: number;
  updatedAt: number;
  /** The caller's role; null in the direct space. */
  myRole: Role | null;
  myTimedOutUntil: number | null;
  /** When the caller joined; null in the direct space and for a workspace they are not in. */
  myJoinedAt: number | null;
  memberCount: number;
}

/** One member of a workspace. */
export interface WorkspaceMemberView {
  serverId: string;
  user: AccountView;
  role: Role;
  joinedAt: number;
  timedOutUntil: number | null;
}

export interface MemberPage {
  items: WorkspaceMemberView[];
  nextCursor: string | null;
  prevCursor: string | null;
}

const NAME_MAX = 80;
const DESCRIPTION_MAX = 1000;

/** The direct space's place in `myWorkspaces`: before every membership. */
export const directSpaceCursor = (): CursorPosition => ({ at: 0, id: DIRECT_SPACE_ID });

/** A workspace's place in `myWorkspaces` (when the caller joined, then id); null if not in it. */
export function myWorkspacesPosition(w: WorkspaceView): CursorPosition | null {
  if (w.isDirect) return directSpaceCursor();
  return w.myJoinedAt === null ? null : { at: w.myJoinedAt, id: w.id };
}

export function toView(row: WorkspaceViewRow): WorkspaceView {
  const direct = row.isDirect === 1;
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    ownerId: row.ownerId,
    isDirect: direct,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    myRole: direct ? null : (row.myRole as Role | null),
    myTimedOutUntil: direct ? null : row.myTimedOutUntil,
    myJoinedAt: direct ? null : row.myJoinedAt,
    memberCount: direct ? 0 : Number(row.memberCount ?? 0),
  };
}

export function toMemberView(serverId: string, r: MemberPageRow): WorkspaceMemberView {
  return {
    serverId,
    role: r.role,
    joinedAt: r.joinedAt,
    timedOutUntil: r.timedOutUntil,
    user: toAccountView({ ...r, id: r.accountId }),
  };
}

export function checkName(value: unknown): string {
  if (typeof value !== 'string') throw validation('name must be a string');
  const name = value.normalize('NFC').trim();
  if (name.length === 0) throw validation('name must not be empty');
  if ([...name].length > NAME_MAX) throw validation(`name must be at most ${NAME_MAX} characters`);
  if (/\p{Cc}/u.test(name)) throw validation('name must not contain control characters');
  return name;
}

export function checkDescription(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw validation('description must be a string');
  const text = value.normalize('NFC').trim();
  if (text.length === 0) return null;
  if ([...text].length > DESCRIPTION_MAX) {
    throw validation(`description must be at most ${DESCRIPTION_MAX} characters`);
  }
  return text;
}
