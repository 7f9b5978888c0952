import type { AuditView } from '../../../services/audit/index.js';
import type { Resolver } from '../../resolver-types.js';

export const AuditEntry = {
  details: ((parent) =>
    parent.details === null ? null : JSON.stringify(parent.details)) as Resolver<AuditView>,
};

/** Stored lower-case, sent as the SDL's enum values. */
export const AuditKind = { MODERATION: 'moderation', COMMAND: 'command' };
export const PrincipalKind = { USER: 'user', KEY: 'key', SERVER: 'server', REMOTE: 'remote' };
