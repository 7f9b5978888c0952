// Row types of the command system (docs/commands.md). Timestamps in ms; booleans 0/1; JSON in
// text columns.

export interface CommandConfirmationTable {
  tokenHash: string;
  accountId: string;
  binding: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

export interface CommandReminderTable {
  id: string;
  accountId: string;
  workspaceId: string;
  conversationId: string;
  text: string;
  dueAt: number;
  createdAt: number;
}

export interface CommandMacroTable {
  id: string;
  /** Set for a workspace macro; null for a personal one. */
  workspaceId: string | null;
  /** Set for a personal macro; null for a workspace one. */
  ownerId: string | null;
  name: string;
  description: string | null;
  /** JSON array of parameter names. */
  params: string;
  /** JSON array of `{ command, args }`. */
  steps: string;
  createdBy: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface CommandKeybindTable {
  id: string;
  workspaceId: string | null;
  ownerId: string | null;
  chord: string;
  command: string | null;
  macroId: string | null;
  /** JSON object of arguments. */
  args: string;
  createdAt: number;
}

export interface CommandPipelineTable {
  id: string;
  workspaceId: string;
  ownerId: string;
  name: string;
  enabled: number;
  /** JSON: `{ kind: 'message', pattern, channelIds }`, `{ kind: 'member_joined' }`, `{ kind: 'schedule', everyMinutes }`. */
  trigger: string;
  /** JSON array of `{ command, args }`. */
  steps: string;
  /** The next scheduled run (schedule triggers only). */
  nextRunAt: number | null;
  /** Start of the current rate window and runs counted in it. */
  windowStart: number;
  windowRuns: number;
  /** Why the pipeline stopped (its owner lost a capability, ...); null while it runs. */
  stoppedReason: string | null;
  lastRunAt: number | null;
  createdAt: number;
}
