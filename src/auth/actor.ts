import { forbidden } from '../errors.js';
import type { SessionInfo } from './session.js';

import type { Action } from './policy.js';

// Who a service call acts for. Every service method that acts for someone takes an `Actor`
// first, so a GraphQL mutation, a CLI command and (later) a command, macro, pipeline or agent
// run are the same call with another actor. Authorization (services/authz/authz.ts) reads the actor; audit
// lines name it with `actorId`.

/** A signed-in person, through one of their sessions. */
export interface UserActor {
  kind: 'user';
  accountId: string;
  sessionId: string;
  username: string;
  deviceId: string | null;
  /** Home server of a person from another server; null for a local account. */
  homeServer: string | null;
  /**
   * The person's own sign-in session of an instance operator account (SessionInfo.isOperator).
   * Instance moderation trusts this flag alone; an actor acting for a person never carries it.
   */
  viaOperatorSession: boolean;
}

/** The command line: whoever can run `svc` on the server's database is the operator of last resort. */
export interface CliActor {
  kind: 'cli';
}

/** Another server, or a person on it, calling over `/s2s/v1` (federation). */
export interface RemoteActor {
  kind: 'remote';
  serverId: string;
  username: string | null;
}

/** What a person allowed an agent, plugin or pipeline to do for them. */
export interface Grant {
  id: string;
  /** The actions it may take; the person's own role still has to allow each of them. */
  actions: readonly Action[];
}

/** Software acting for a person within a grant: an agent, a workspace plugin, a pipeline run. */
export interface DelegatedActor {
  kind: 'agent' | 'plugin' | 'pipeline';
  onBehalfOf: UserActor;
  grant: Grant;
}

export type Actor = UserActor | CliActor | RemoteActor | DelegatedActor;

export const CLI_ACTOR: CliActor = Object.freeze({ kind: 'cli' });

/** The actor of a request signed in with `session`. */
export function userActor(session: SessionInfo): UserActor {
  return {
    kind: 'user',
    accountId: session.accountId,
    sessionId: session.sessionId,
    username: session.username,
    deviceId: session.deviceId,
    homeServer: session.homeServer,
    viaOperatorSession: session.isOperator === true,
  };
}

/**
 * A local person acted for without a sign-in of theirs (a pipeline run, a reminder, `svc mcp`):
 * no session, no device, never an operator session.
 */
export function personWithoutSession(account: { id: string; username: string }): UserActor {
  return {
    kind: 'user',
    accountId: account.id,
    sessionId: '',
    username: account.username,
    deviceId: null,
    homeServer: null,
    viaOperatorSession: false,
  };
}

/** The person an actor speaks for, if any (a delegated actor's person; never the CLI's). */
export function personOf(actor: Actor): UserActor | null {
  if (actor.kind === 'user') return actor;
  if (actor.kind === 'agent' || actor.kind === 'plugin' || actor.kind === 'pipeline') {
    return actor.onBehalfOf;
  }
  return null;
}

/**
 * The account an action runs as: the person's, or the person's a delegated actor works for.
 * FORBIDDEN for the command line and remote servers, which have no account of their own here.
 */
export function actingAccountId(actor: Actor): string {
  const person = personOf(actor);
  if (!person) throw forbidden('this action needs a signed-in person');
  return person.accountId;
}

/** The signed-in person behind a session-only operation (sessions, devices, password). */
export function actingUser(actor: Actor): UserActor {
  if (actor.kind !== 'user') throw forbidden('this action needs a signed-in person');
  return actor;
}

/** `actor_id` of the audit log: the account id the action ran as, or `cli`. */
export function actorId(actor: Actor): string {
  if (actor.kind === 'cli') return 'cli';
  if (actor.kind === 'remote') return `remote:${actor.serverId}`;
  return actingAccountId(actor);
}

/**
 * FORBIDDEN unless the actor is an instance operator: the command line, or a person's own
 * sign-in session of an operator account. A delegated actor is refused like anyone else.
 */
export function assertInstanceOperator(
  actor: Actor,
  message = 'only an instance operator may use instance moderation',
): void {
  if (actor.kind === 'cli') return;
  if (actor.kind === 'user' && actor.viaOperatorSession) return;
  throw forbidden(message);
}
