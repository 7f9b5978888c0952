// Row types of the table services/audit owns (db/table-owners.ts). Timestamps in ms. The audit
// log has no foreign key to `account` or `workspace`: a row outlives what it names.

export type AuditKind = 'moderation' | 'command';

export interface AuditLogTable {
  id: string;
  /** `moderation` rows are kept; `command` rows are pruned after SVC_AUDIT_RETENTION_DAYS. */
  kind: AuditKind;
  /** Dotted action name, such as `principal.block`. */
  action: string;
  /** Operator user id, or `cli`. */
  actorId: string;
  target: string;
  reason: string | null;
  /** JSON object with action-specific detail, or null. */
  details: string | null;
  createdAt: number;
}
