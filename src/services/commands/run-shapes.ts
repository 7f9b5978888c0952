// The shapes of a command run as the service takes and answers them: the context a client
// names, what it asks to run, the view of a command, a run's result, a prepared run and its
// audit details. Re-exported by command-service.ts.

import type { Actor, UserActor } from '../../auth/actor.js';

import type { Args, CommandDef, Initiator, RunContext, Surface } from './types.js';
/** The context a client names: a workspace, and a conversation in it. */
export interface ContextInput {
  serverId?: unknown;
  conversationId?: unknown;
}

export interface ExecuteInput {
  command: unknown;
  /** A plugin id or registry entry id, to pick a plugin's command over a built-in of that name. */
  plugin?: unknown;
  args?: unknown;
  /** The message-box form of the arguments (see parseLine); instead of `args`. */
  text?: unknown;
  context?: ContextInput | null;
  initiator?: unknown;
  confirmationToken?: unknown;
}

/** A command as GraphQL shows it (agent-facing fields blank while `ai_commands` is off). */
export interface CommandView {
  name: string;
  description: string;
  arguments: Array<{ name: string; type: string; description: string; required: boolean }>;
  capability: string;
  surfaces: Surface[];
  destructive: boolean;
  source: CommandDef['source'];
  nlDescription: string | null;
  intentSamples: string[];
  aiCallable: boolean;
}

export type RunStatus = 'DONE' | 'CONFIRMATION_REQUIRED' | 'CLIENT_ACTION';

export interface RunResult {
  status: RunStatus;
  command: CommandView;
  message: string;
  messageId: string | null;
  confirmation: { token: string; summary: string; expiresAt: number } | null;
  auditId: string;
  /** The checked arguments of a CLIENT_ACTION run, for the client's plugin; null otherwise. */
  args: Args | null;
}

/** A run checked and ready: the command, its arguments, context and the actor it runs as. */
export interface PreparedRun {
  cmd: CommandDef;
  args: Args;
  context: RunContext;
  person: UserActor;
  actor: Actor;
  initiator: Initiator;
  /** Names of the arguments' and context's objects for people (see CommandDef.describe). */
  labels: Record<string, string>;
}

/** What an audit row of a run says besides who and what. */
export interface RunAudit {
  initiator: Initiator;
  command: string;
  source?: string | null;
  args: Record<string, unknown>;
  context: { serverId: string | null; conversationId: string | null };
  outcome: 'DONE' | 'CONFIRMATION_REQUIRED' | 'CLIENT_ACTION' | 'REFUSED';
  error?: { code: string; message: string } | null;
  confirmation: 'ISSUED' | 'USED' | 'PRESENTED' | null;
  macroId?: string | null;
  pipelineId?: string | null;
}
