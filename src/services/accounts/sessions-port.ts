import type { IssuedSession, SessionView } from '../../auth/session.js';
import type { Executor } from '../../db/database.js';
import type { Tx } from '../../db/transaction.js';

/**
 * The sessions accounts start (password sign-in), list and end (password change and reset, the
 * operator command line): sessions/session-service.ts, handed in by build-services.ts. A port
 * rather than an import because sessions read the account view (account-view.ts) when they
 * resolve a token; accounts do not import sessions back.
 */
export interface AccountSessions {
  start(
    executor: Executor,
    input: { accountId: string; ip?: string | null; userAgent?: string | null },
  ): Promise<IssuedSession>;
  /** Ends sessions in the caller's transaction; the ids ended. */
  end(
    tx: Tx,
    filter: { accountId: string; sessionId?: string; exceptSessionId?: string },
    reason: 'password_changed' | 'password_reset' | 'ended_by_operator',
  ): Promise<string[]>;
  /** The live sessions of an account, newest first. */
  listOf(accountId: string): Promise<SessionView[]>;
}
