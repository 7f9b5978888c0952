import type { EnumResolvers, TypeResolvers } from '../../generated/resolver-types.js';

export const AuditEntry: TypeResolvers<'AuditEntry'> = {
  details: (parent) => (parent.details === null ? null : JSON.stringify(parent.details)),
};

/** Stored lower-case, sent as the SDL's enum values. */
export const AuditKind: EnumResolvers<'AuditKind'> = {
  MODERATION: 'moderation',
  COMMAND: 'command',
};
export const PrincipalKind: EnumResolvers<'PrincipalKind'> = {
  USER: 'user',
  KEY: 'key',
  SERVER: 'server',
  REMOTE: 'remote',
};
