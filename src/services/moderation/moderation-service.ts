import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { Authz } from '../authz/index.js';
import type { MessageRemover } from '../messages/index.js';
import type { SessionService } from '../sessions/index.js';

import type { AuditLog } from '../audit/index.js';
import { PrincipalBlockService, type WorkspaceRemover } from './principal-blocks.js';
import { ReportService } from './reports.js';

/**
 * Instance moderation (docs/moderation.md): abuse reports, principal blocks and the audit log.
 * Address blocks are IpBlockService; the operator role is AccountService.setOperatorByUsername.
 */
export class ModerationService {
  readonly reports: ReportService;
  readonly blocks: PrincipalBlockService;

  constructor(
    readonly deps: {
      db: Db;
      clock: Clock;
      config: Config;
      sessions: SessionService;
      audit: AuditLog;
      authz: Authz;
      removeWorkspace: WorkspaceRemover;
      messages: MessageRemover;
      /** Verifies franking reveals in reports of encrypted messages. */
      frankingKey?: Buffer;
    },
  ) {
    this.reports = new ReportService(
      deps.db,
      deps.clock,
      deps.audit,
      deps.authz,
      deps.frankingKey ?? null,
    );
    this.blocks = new PrincipalBlockService(deps);
  }

  get audit(): AuditLog {
    return this.deps.audit;
  }

  /**
   * FORBIDDEN when a principal block covers someone signing in or up. Every signup path calls it
   * before creating the account (with the key identity, or home server and username, it will
   * have); SessionService.start also refuses a blocked account, whatever the path.
   */
  assertNotBlocked(who: {
    accountId?: string | null;
    keyIdentityId?: string | null;
    homeServer?: string | null;
    username?: string | null;
  }): Promise<void> {
    return this.blocks.assertNotBlocked(who);
  }

  /** Prunes `command` audit rows past SVC_AUDIT_RETENTION_DAYS (the daily job). */
  pruneAudit(): Promise<number> {
    return this.deps.audit.pruneCommandRows(this.deps.config.instance.auditRetentionDays);
  }
}
