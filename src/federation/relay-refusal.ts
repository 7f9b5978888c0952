import { parsePrincipal } from '../services/principals/index.js';

/** A relay's own refusal (contract: `{"error":"<code>","message":"<text>"}`). */
export class RelayRefusal extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'RelayRefusal';
  }

  body(): Record<string, unknown> {
    return { error: this.error, message: this.message, ...this.extra };
  }
}

/** A username at a relay, as a host accepts it (the `remote:` principal's name part). */
export const REMOTE_USER_RE = /^[\p{L}\p{N}._-]{1,64}$/u;

/** A host id from a client's URL: `host[:port]`, lower-case (the `server:` principal's form). */
export function checkServerId(input: string): string {
  try {
    const p = parsePrincipal(`server:${input}`);
    if (p.kind === 'server') return p.host;
  } catch {
    // answered below
  }
  throw new RelayRefusal(
    400,
    'validation',
    `"${input.slice(0, 80)}" is not a server id: a lower-case host name or IPv4 address, with an optional :port from 1 to 65535`,
  );
}
