import type { Actor } from '../../auth/actor.js';
import { PrimedFact, type Authz } from '../authz/index.js';

import { plausibleId } from './access.js';
import type { ConversationAccessRow, EarlyAccess } from './queries.js';

/**
 * The caller's access to one conversation, read in the same statement as the request's session
 * (PostgreSQL: one round trip instead of two, sessions/queries.ts). The GraphQL route asks for
 * it when a request's one root field names a conversation (`conversationId`, or
 * `input.conversationId`), and the first access check of that conversation and account in the same request uses it
 * instead of reading again (`findConversationAccess`). Once: a later check in the request reads
 * for itself, so a write the request made in between is seen.
 *
 * Not a cache: the row was read after the request arrived, as the check's own read would have
 * been, and it primes only that request's `Authz` memo (`requireActor` in graphql/context.ts);
 * the actor itself carries no data.
 */
export class PrefetchedAccess implements EarlyAccess {
  private used = false;

  constructor(
    readonly conversationId: string,
    readonly accountId: string,
    /** The access row; undefined when the conversation does not exist. */
    private readonly row: ConversationAccessRow | undefined,
  ) {}

  /** The row, the first time it is asked for this conversation and account; null otherwise. */
  take(
    conversationId: string,
    accountId: string,
  ): { row: ConversationAccessRow | undefined } | null {
    if (this.used || conversationId !== this.conversationId || accountId !== this.accountId) {
      return null;
    }
    this.used = true;
    return { row: this.row };
  }
}

/** The key under which a request's `Authz` memo holds the prefetched access. */
export const PREFETCHED_ACCESS = new PrimedFact<PrefetchedAccess>('conversation access');

/** The prefetched access primed for a person's own request; never a delegated actor's. */
export function prefetchedAccessOf(authz: Authz, actor: Actor): PrefetchedAccess | undefined {
  return authz.primed(actor, PREFETCHED_ACCESS);
}

/** The conversation a request's root field names, to read with its session; null for none. */
export function conversationNamed(args: Record<string, unknown>): string | null {
  const direct = args.conversationId;
  if (plausibleId(direct)) return direct;
  const input = args.input;
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const nested = (input as Record<string, unknown>).conversationId;
    if (plausibleId(nested)) return nested;
  }
  return null;
}
