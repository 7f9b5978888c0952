import { operatorFromSession, type ModerationActor } from '../../../services/moderation/actor.js';
import { requireSession, type GraphqlContext } from '../../context.js';

/**
 * The one gate of every instance moderation root: UNAUTHENTICATED without a session, FORBIDDEN
 * for anyone but an operator on their own session (services/moderation/actor.ts).
 */
export function assertOperator(ctx: GraphqlContext): ModerationActor {
  return operatorFromSession(requireSession(ctx));
}
