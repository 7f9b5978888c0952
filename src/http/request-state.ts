import type { ResolvedSession } from '../services/sessions/index.js';

import type { Admitted } from './admission.js';

/** What the hooks learn about a request before its handler runs: admission, then the session. */
export interface RequestState extends Admitted {
  /** Read by the /api tree's session hook; null elsewhere and for an anonymous request. */
  session: ResolvedSession | null;
  /** The raw `svc_session` cookie, when present (even if it names no live session). */
  sessionToken: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    svc: RequestState;
  }
}
