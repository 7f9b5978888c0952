import { forbidden } from '../errors.js';

import type { Config } from './index.js';

// The server's roles (SVC_ROLE, docs/federation.md): a relay forwards its own people's requests to
// spaces hosted elsewhere, a host serves spaces to people of other servers; `both` is both.

export type ServerRole = 'relay' | 'host';

/** Whether this server plays `role`. */
export function hasRole(config: Pick<Config, 'server'>, role: ServerRole): boolean {
  return config.server.role === 'both' || config.server.role === role;
}

/**
 * FORBIDDEN for a relay-only or host-only field asked of a server without that role (contract,
 * Errors: "a relay-only field on a non-relay"). `field` names it for the message.
 */
export function assertRole(config: Pick<Config, 'server'>, role: ServerRole, field: string): void {
  if (!hasRole(config, role)) {
    throw forbidden(
      `${field} is ${role}-only and this server is not a ${role} (SVC_ROLE=${config.server.role})`,
    );
  }
}
