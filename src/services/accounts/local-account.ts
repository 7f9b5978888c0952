import { forbidden } from '../../errors.js';
import type { SessionInfo } from '../../auth/session.js';

/**
 * FORBIDDEN for a person whose relay is another server, signed in here directly: mutations that
 * change their account run at their relay (contract: POST /api). Every account mutation calls it.
 */
export function assertLocalAccount(session: Pick<SessionInfo, 'homeServer'>): void {
  if (session.homeServer !== null) {
    throw forbidden(
      `your account lives on ${session.homeServer}; change it there, not on this server`,
    );
  }
}
