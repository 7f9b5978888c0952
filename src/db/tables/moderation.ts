// Row types of the tables services/moderation owns (db/table-owners.ts): abuse reports and
// principal blocks. Timestamps in ms; booleans 0/1. Neither table has a foreign key to `account`
// or `workspace`: a report and a block outlive the account or workspace they name (a purge must
// not fail on them, and a report keeps its snapshot).

export type ReportSubjectKind = 'message' | 'user' | 'workspace';

export interface AbuseReportTable {
  id: string;
  reporterId: string;
  subjectKind: ReportSubjectKind;
  /** Message id, account id or workspace id. */
  subjectId: string;
  /**
   * The local account holding the reported principal when the report was filed: the message's
   * author, the user, or the workspace's owner.
   */
  subjectAccountId: string | null;
  /** The workspace whose owner and Moderators see the report (message reports only). */
  workspaceId: string | null;
  /** Lower-case category (`spam`, `harassment`, ...). */
  category: string;
  text: string | null;
  /** JSON: the reported content as it was when reported. */
  snapshot: string;
  createdAt: number;
  /** Resolved by an instance operator (or the CLI). */
  resolvedAt: number | null;
  resolvedBy: string | null;
  /** Resolved by the workspace's owner or a Moderator. */
  workspaceResolvedAt: number | null;
  workspaceResolvedBy: string | null;
}

export type PrincipalKind = 'user' | 'key' | 'server' | 'remote';

export interface PrincipalBlockTable {
  /** Canonical principal id: `user:<accountId>`, `key:<id>`, `server:<host>`, `remote:<u>@<host>`. */
  principalId: string;
  kind: PrincipalKind;
  reason: string | null;
  /** 1 when the block also removed what the principal posted and the workspaces it owned. */
  cascade: number;
  createdAt: number;
  /** Operator user id, or `cli`. */
  createdBy: string;
}
