import type { IssuedSession } from '../../../services/sessions/index.js';
import type { GraphqlContext } from '../../context.js';

/**
 * The one way a sign-in ends (`login`, `signupWithInvite`, `loginWithKey`, `signupWithKey`):
 * the session's cookies are set on the response and the `SessionPayload` names the signed-in
 * account, the CSRF token the client echoes, when the session expires and, after a signup, the
 * server the account belongs to.
 */
export function startSessionPayload<A extends object>(
  ctx: GraphqlContext,
  signedIn: { account: A; session: IssuedSession; serverId?: string | null },
) {
  const { account, session } = signedIn;
  ctx.cookies.startSession(session);
  return {
    user: { ...account, viewerIsSelf: true },
    csrfToken: session.csrfToken,
    expiresAt: session.expiresAt,
    serverId: signedIn.serverId ?? null,
  };
}
