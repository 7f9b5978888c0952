import type { FileReference, Problem, SourceName } from './model.js';

// What `svc import` prints: what it made (or, with --dry-run, would make), what it found made
// already, the accounts and how their people claim them, the files left behind, the problems.

export interface CreatedAccount {
  username: string;
  /** The source's username when svc's rules or a taken name made it change. */
  sourceUsername?: string;
  email: string | null;
  /** How the person takes the account over (docs/operations.md, "Importing"). */
  claim: 'password-reset' | 'operator';
}

export interface ReferencedFile extends FileReference {
  /** The conversation's name (or `direct`) and the message's time, to find it by. */
  conversation: string;
  at: string;
  /** Why a file the export carries was not stored (absent for a file it only names). */
  reason?: string;
}

export interface ImportReport {
  source: SourceName;
  file: string;
  dryRun: boolean;
  created: {
    accounts: number;
    workspaces: number;
    workspaceMembers: number;
    channels: number;
    directConversations: number;
    groupConversations: number;
    conversationMembers: number;
    messages: number;
    replies: number;
    reactions: number;
    pins: number;
    /** Files the export carries, stored and attached to their messages. */
    attachments: number;
    /** Custom emoji, counted once per workspace that gets it. */
    customEmoji: number;
  };
  /**
   * Items a run before this one made (or, for accounts, people who had one by address; for
   * emoji, a workspace's emoji of the same name).
   */
  existing: {
    accounts: number;
    workspaces: number;
    conversations: number;
    messages: number;
    customEmoji: number;
  };
  accounts: CreatedAccount[];
  files: ReferencedFile[];
  skipped: Record<string, number>;
  problems: Problem[];
  /** With --claim-tokens: the file written and how many tokens it holds. */
  claimTokens?: { file: string; tokens: number };
  seconds: number;
}

export function emptyReport(source: SourceName, file: string, dryRun: boolean): ImportReport {
  return {
    source,
    file,
    dryRun,
    created: {
      accounts: 0,
      workspaces: 0,
      workspaceMembers: 0,
      channels: 0,
      directConversations: 0,
      groupConversations: 0,
      conversationMembers: 0,
      messages: 0,
      replies: 0,
      reactions: 0,
      pins: 0,
      attachments: 0,
      customEmoji: 0,
    },
    existing: { accounts: 0, workspaces: 0, conversations: 0, messages: 0, customEmoji: 0 },
    accounts: [],
    files: [],
    skipped: {},
    problems: [],
    seconds: 0,
  };
}
