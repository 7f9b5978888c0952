import { forbidden } from '../../errors.js';
import type { SessionInfo } from '../sessions/session-service.js';

/**
 * Who makes an instance moderation change: an operator through GraphQL, or the command line
 * (whoever can run `svc` on the server's database is trusted as the operator of last resort).
 */
export type ModerationActor = { kind: 'operator'; accountId: string } | { kind: 'cli' };

export const CLI_ACTOR: ModerationActor = { kind: 'cli' };

/** `actor_id` of the audit log: the operator's account id, or `cli`. */
export const actorId = (actor: ModerationActor): string =>
  actor.kind === 'cli' ? 'cli' : actor.accountId;

/**
 * The operator behind a session, or FORBIDDEN. It trusts `SessionInfo.isOperator` alone: the
 * session layer sets it only on a person's own sign-in session of an operator account, read
 * fresh from the account on every request. A session that acts for a person (an app or bot,
 * when those exist) must carry `isOperator: false`, so it is refused here like anyone else.
 */
export function operatorFromSession(session: SessionInfo): ModerationActor {
  if (session.isOperator !== true) {
    throw forbidden('only an instance operator may use instance moderation');
  }
  return { kind: 'operator', accountId: session.accountId };
}
