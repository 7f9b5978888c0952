import type { Actor, UserActor } from '../../auth/actor.js';
import type { Action } from '../../auth/policy.js';

/** Where a command is offered: the message box (`/name`), the command palette, AI agents. */
export type Surface = 'MESSAGE_BOX' | 'PALETTE' | 'AI';
export const SURFACES: readonly Surface[] = ['MESSAGE_BOX', 'PALETTE', 'AI'];

/** Who started a run, as the client declares it (rule 1: not a security boundary). */
export type Initiator = 'USER' | 'KEYBIND' | 'MACRO' | 'PIPELINE' | 'AGENT';
export const INITIATORS: readonly Initiator[] = ['USER', 'KEYBIND', 'MACRO', 'PIPELINE', 'AGENT'];

export type ArgType =
  | 'string'
  | 'text'
  | 'integer'
  | 'number'
  | 'boolean'
  | 'user'
  | 'channel'
  | 'message'
  | 'duration'
  | 'secret';

export interface ArgDef {
  name: string;
  type: ArgType;
  description: string;
  required: boolean;
  /** Strings: at most this many characters. */
  maxLength?: number;
  /** Integers and numbers; durations in ms. */
  min?: number;
  max?: number;
}

/**
 * What a command needs: a workspace action of the catalogue (checked for the acting person in the
 * context's workspace), `instance:operator` (the instance moderation commands), or `self` (only a
 * signed-in person, acting on their own things).
 */
export type Capability = Action | 'instance:operator' | 'self';

/** The context a command runs in. */
export interface RunContext {
  /** The workspace; null for a command that needs none (`/away`, instance moderation). */
  workspaceId: string | null;
  conversationId: string | null;
}

/** A validated argument set. */
export type Args = Record<string, string | number | boolean | null>;

/** What a run hands a built-in. */
export interface BuiltinCall {
  /** The actor the service call runs as (the person, or software acting for them). */
  actor: Actor;
  person: UserActor;
  args: Args;
  context: RunContext;
  now: number;
}

/** A built-in's answer: a line for the person, and ids of what it made or changed. */
export interface BuiltinResult {
  message: string;
  /** A message the run posted, if any. */
  messageId?: string | null;
}

export interface CommandSource {
  kind: 'BUILTIN' | 'PLUGIN';
  /** The registry entry, plugin id and version of a plugin command. */
  workspacePluginId: string | null;
  pluginId: string | null;
  version: string | null;
}

/** One command of the registry. */
export interface CommandDef {
  name: string;
  description: string;
  args: readonly ArgDef[];
  capability: Capability;
  /**
   * The workspace actions the service call checks (granted to an agent or pipeline for this run
   * only); the person's role must still allow each.
   */
  actions: readonly Action[];
  surfaces: readonly Surface[];
  destructive: boolean;
  /** Needs a workspace (and a conversation when `needsConversation`) in the context. */
  needsWorkspace: boolean;
  needsConversation: boolean;
  /** Runs in a channel only (not a direct or group conversation). */
  channelOnly?: boolean;
  source: CommandSource;
  nlDescription: string | null;
  intentSamples: readonly string[];
  aiCallable: boolean;
  /**
   * What a confirmation says will happen, in words; `labels` names the arguments' and the
   * context's objects for people (`user`: `@name`, `channel`: `#name`).
   */
  describe?(args: Args, labels: Readonly<Record<string, string>>): string;
  /** Runs the command; absent for plugin commands, which their clients run. */
  run?(call: BuiltinCall): Promise<BuiltinResult>;
}

export const BUILTIN_SOURCE: CommandSource = Object.freeze({
  kind: 'BUILTIN',
  workspacePluginId: null,
  pluginId: null,
  version: null,
});
