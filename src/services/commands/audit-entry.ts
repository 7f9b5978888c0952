import type { AuditLogTable } from '../../db/tables/audit.js';
import { keyCursor } from '../paging/index.js';

import type { RunAudit } from './run-shapes.js';

/** One entry of `commandAudit`, read from the audit row a run or a refusal wrote. */
export function auditEntryOf(r: AuditLogTable) {
  const d = (r.details ? JSON.parse(r.details) : {}) as Partial<RunAudit>;
  return {
    id: r.id,
    actorId: r.actorId,
    initiator: d.initiator ?? 'USER',
    command: d.command ?? '',
    source: d.source ?? null,
    args: d.args ?? {},
    conversationId: d.context?.conversationId ?? null,
    outcome: d.outcome ?? 'REFUSED',
    errorCode: d.error?.code ?? null,
    errorMessage: d.error?.message ?? null,
    confirmation: d.confirmation ?? null,
    macroId: d.macroId ?? null,
    pipelineId: d.pipelineId ?? null,
    createdAt: Number(r.createdAt),
    cursor: keyCursor(Number(r.createdAt), r.id),
  };
}
