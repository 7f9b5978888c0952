import { actingAccountId, actorId, assertInstanceOperator, type Actor } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import type { ReportSubjectKind } from '../../db/tables/moderation.js';
import { forbidden, notFound, rateLimited, validation } from '../../errors.js';
import { HOUR_MS, type Clock } from '../../lib/clock.js';
import { encodeCursor } from '../../lib/cursor.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs, type KeysetPage } from '../paging/index.js';
import { isId, newId } from '../../lib/ids.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import { isUniqueViolation } from '../../db/errors.js';

import type { Authz } from '../authz/index.js';
import {
  canRead,
  plausibleId,
  readFactsOf,
  findConversationAccess,
} from '../conversations/index.js';
import { verifyReveal } from '../mls/index.js';

import type { AuditLog } from '../audit/index.js';
import {
  findAccountBrief,
  findMessageAttachmentByBlob,
  findMessageForReport,
  findOpenReport,
  findReport,
  findWorkspaceForReport,
  insertReport,
  listReports,
  markReportResolved,
  reportTimesSince,
  type ReportRow,
} from './queries.js';

export const REPORT_CATEGORIES = [
  'SPAM',
  'HARASSMENT',
  'HATE',
  'VIOLENCE',
  'SEXUAL_CONTENT',
  'SELF_HARM',
  'ILLEGAL',
  'IMPERSONATION',
  'OTHER',
] as const;
export type ReportCategory = (typeof REPORT_CATEGORIES)[number];

/** Characters of free text a report may carry. */
export const REPORT_TEXT_MAX = 2000;
/** Reports one person may file per rolling hour (duplicates returned as they are do not count). */
export const REPORTS_PER_HOUR = 10;
export const REPORT_PAGE_DEFAULT = 100;
export const REPORT_PAGE_MAX = 500;

/** The reported content as it was when reported; fields depend on the subject kind. */
export interface ReportSnapshot {
  // message
  messageId?: string;
  conversationId?: string;
  authorId?: string;
  authorUsername?: string | null;
  authorDisplayName?: string | null;
  text?: string | null;
  encrypted?: boolean;
  /** For an encrypted message: the text is a franking reveal the server verified. */
  frankingVerified?: boolean;
  messageCreatedAt?: number;
  messageEditedAt?: number | null;
  // user
  userId?: string;
  username?: string;
  displayName?: string | null;
  // workspace
  workspaceId?: string;
  workspaceName?: string;
  workspaceDescription?: string | null;
  ownerId?: string | null;
  ownerUsername?: string | null;
}

/** A report as one audience sees it; the resolution is that audience's own. */
export interface ReportView {
  id: string;
  cursor: string;
  subjectKind: 'MESSAGE' | 'USER' | 'WORKSPACE';
  subjectId: string;
  category: ReportCategory;
  text: string | null;
  snapshot: ReportSnapshot;
  /** The workspace whose owner and Moderators see it (message reports in a workspace). */
  serverId: string | null;
  subjectUsername: string | null;
  /** Set for operators and for the reporter; null for workspace moderators. */
  reporterId: string | null;
  reporterUsername: string | null;
  createdAt: number;
  resolved: boolean;
  resolvedAt: number | null;
  resolvedBy: string | null;
}

type Audience = 'reporter' | 'instance' | 'workspace';

/**
 * Abuse reports: any signed-in person reports a message, a user or a workspace; the workspace's
 * owner and Moderators handle message reports from their workspace, operators handle every
 * report. The two queues resolve independently.
 */
export class ReportService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
    private readonly authz: Authz,
    /** The server's franking key, to verify reveals of encrypted messages (docs/e2ee.md). */
    private readonly frankingKey: Buffer | null = null,
  ) {}

  /**
   * Reports a message. An encrypted message is reported with a franking reveal: the plaintext
   * and opening key the reporter decrypted. The report shows moderators that plaintext once the
   * server verified it against the message's commitment and tag (VALIDATION when it does not).
   */
  async reportMessage(
    actor: Actor,
    input: { messageId: unknown; category: unknown; text?: unknown; reveal?: unknown },
  ): Promise<ReportView> {
    const me = actingAccountId(actor);
    const { category, text } = checkReportInput(input);
    const messageId = typeof input.messageId === 'string' ? input.messageId : '';
    const msg = isId(messageId) ? await findMessageForReport(this.db.kysely, messageId) : undefined;
    if (!msg || msg.deletedAt !== null || !(await this.mayRead(me, msg.conversationId))) {
      throw notFound('message');
    }
    if (msg.authorId === me) throw validation('you cannot report your own message');
    let shown = msg.text;
    let frankingVerified: boolean | undefined;
    if (msg.encrypted === 1) {
      shown = this.verifiedPlaintext(msg, input.reveal);
      frankingVerified = true;
    }
    return this.file(actor, {
      subjectKind: 'message',
      subjectId: msg.id,
      subjectAccountId: msg.authorId,
      workspaceId: msg.isDirect === 1 ? null : msg.workspaceId,
      category,
      text,
      snapshot: {
        messageId: msg.id,
        conversationId: msg.conversationId,
        workspaceId: msg.workspaceId,
        authorId: msg.authorId,
        authorUsername: msg.authorUsername,
        authorDisplayName: msg.authorDisplayName,
        text: shown,
        encrypted: msg.encrypted === 1,
        frankingVerified,
        messageCreatedAt: Number(msg.createdAt),
        messageEditedAt: msg.editedAt === null ? null : Number(msg.editedAt),
      },
    });
  }

  /** The plaintext of an encrypted message's reveal, once verified (VALIDATION otherwise). */
  private verifiedPlaintext(
    msg: NonNullable<Awaited<ReturnType<typeof findMessageForReport>>>,
    reveal: unknown,
  ): string {
    const r = reveal as { plaintext?: unknown; opening?: unknown } | null | undefined;
    if (!r || typeof r.plaintext !== 'string' || typeof r.opening !== 'string') {
      throw validation(
        'an encrypted message is reported with its franking reveal: the decrypted plaintext and its opening key',
      );
    }
    if (r.plaintext.length > 262_144 || r.opening.length > 64) {
      throw validation('the reveal is larger than any message');
    }
    const verified =
      this.frankingKey !== null &&
      msg.frankingCommitment !== null &&
      msg.frankingTag !== null &&
      verifyReveal(
        this.frankingKey,
        {
          messageId: msg.id,
          conversationId: msg.conversationId,
          authorId: msg.authorId,
          createdAt: Number(msg.createdAt),
          frankingCommitment: msg.frankingCommitment,
          frankingTag: msg.frankingTag,
        },
        { plaintext: r.plaintext, opening: r.opening },
      );
    if (!verified) {
      throw validation(
        'the revealed plaintext and opening do not match what the sender committed to',
      );
    }
    return r.plaintext;
  }

  async reportUser(
    actor: Actor,
    input: { userId: unknown; category: unknown; text?: unknown },
  ): Promise<ReportView> {
    const me = actingAccountId(actor);
    const { category, text } = checkReportInput(input);
    const userId = typeof input.userId === 'string' ? input.userId : '';
    const user = isId(userId) ? await findAccountBrief(this.db.kysely, userId) : undefined;
    if (!user || user.deletedAt !== null) throw notFound('user');
    if (user.id === me) throw validation('you cannot report yourself');
    return this.file(actor, {
      subjectKind: 'user',
      subjectId: user.id,
      subjectAccountId: user.id,
      workspaceId: null,
      category,
      text,
      snapshot: { userId: user.id, username: user.username, displayName: user.displayName },
    });
  }

  async reportWorkspace(
    actor: Actor,
    input: { serverId: unknown; category: unknown; text?: unknown },
  ): Promise<ReportView> {
    actingAccountId(actor);
    const { category, text } = checkReportInput(input);
    const serverId = typeof input.serverId === 'string' ? input.serverId : '';
    const ws = isId(serverId) ? await findWorkspaceForReport(this.db.kysely, serverId) : undefined;
    if (!ws) throw notFound('workspace');
    if (ws.isDirect === 1) {
      throw validation('the direct space cannot be reported; report a message or a user');
    }
    if (!(await this.authz.membership(actor, { workspaceId: ws.id }))) {
      throw notFound('workspace');
    }
    return this.file(actor, {
      subjectKind: 'workspace',
      subjectId: ws.id,
      subjectAccountId: ws.ownerId,
      // A report about a workspace goes to the operators only, never to its own moderators.
      workspaceId: null,
      category,
      text,
      snapshot: {
        workspaceId: ws.id,
        workspaceName: ws.name,
        workspaceDescription: ws.description,
        ownerId: ws.ownerId,
        ownerUsername: ws.ownerUsername,
      },
    });
  }

  private async file(
    actor: Actor,
    r: {
      subjectKind: ReportSubjectKind;
      subjectId: string;
      subjectAccountId: string | null;
      workspaceId: string | null;
      category: ReportCategory;
      text: string | null;
      snapshot: ReportSnapshot;
    },
  ): Promise<ReportView> {
    const me = actingAccountId(actor);
    const db = this.db.kysely;
    const existing = await findOpenReport(db, me, r.subjectKind, r.subjectId);
    if (existing) return toView(existing, 'reporter');
    const now = this.clock.now().getTime();
    const recent = await reportTimesSince(db, me, now - HOUR_MS);
    if (recent.length >= REPORTS_PER_HOUR) {
      const oldest = recent[recent.length - REPORTS_PER_HOUR] as number;
      throw rateLimited((oldest + HOUR_MS - now) / 1000, 'too many reports');
    }
    const id = newId();
    try {
      await insertReport(db, {
        id,
        reporterId: me,
        subjectKind: r.subjectKind,
        subjectId: r.subjectId,
        subjectAccountId: r.subjectAccountId,
        workspaceId: r.workspaceId,
        category: r.category,
        text: r.text,
        snapshot: JSON.stringify(r.snapshot),
        createdAt: now,
        resolvedAt: null,
        resolvedBy: null,
        workspaceResolvedAt: null,
        workspaceResolvedBy: null,
      });
    } catch (err) {
      // The same person reporting the same thing twice at once: one report, as if in turn.
      if (!isUniqueViolation(err)) throw err;
      const winner = await findOpenReport(db, me, r.subjectKind, r.subjectId);
      if (!winner) throw err;
      return toView(winner, 'reporter');
    }
    return toView((await findReport(db, id)) as ReportRow, 'reporter');
  }

  /** Every report, oldest first (operators and the CLI). */
  async listInstance(
    actor: Actor,
    opts: {
      openOnly?: boolean | null;
    } & KeysetArgs,
  ): Promise<ReportView[]> {
    assertInstanceOperator(actor);
    const page = pageOf(opts);
    const rows = await listReports(this.db.kysely, { openOnly: opts.openOnly === true, page });
    return keysetRows(rows, page).map((r) => toView(r, 'instance'));
  }

  /** Marks a report resolved for the instance; NOT_FOUND for no such report. Idempotent. */
  async resolveInstance(actor: Actor, id: unknown): Promise<ReportView> {
    assertInstanceOperator(actor);
    const reportId = typeof id === 'string' ? id.trim().toLowerCase() : '';
    if (!isId(reportId)) throw notFound('report');
    return this.db.transaction(async (tx) => {
      const row = await findReport(tx.db, reportId);
      if (!row) throw notFound('report');
      const by = actorId(actor);
      if (await markReportResolved(tx.db, reportId, 'instance', this.clock.now().getTime(), by)) {
        await this.audit.record(tx, {
          action: 'report.resolve',
          actorId: by,
          target: `report:${reportId}`,
          details: { subjectKind: row.subjectKind, subjectId: row.subjectId },
        });
      }
      return toView((await findReport(tx.db, reportId)) as ReportRow, 'instance');
    });
  }

  /** A workspace's message reports, oldest first: its owner and Moderators only. */
  async listWorkspace(
    actor: Actor,
    opts: {
      serverId: unknown;
      openOnly?: boolean | null;
    } & KeysetArgs,
  ): Promise<ReportView[]> {
    const page = pageOf(opts);
    const serverId = await this.assertWorkspaceModerator(actor, opts.serverId);
    const rows = await listReports(this.db.kysely, {
      workspaceId: serverId,
      openOnly: opts.openOnly === true,
      page,
    });
    return keysetRows(rows, page).map((r) => toView(r, 'workspace'));
  }

  /** Marks a report resolved for its workspace; NOT_FOUND unless the caller moderates it. */
  async resolveWorkspace(actor: Actor, id: unknown): Promise<ReportView> {
    const me = actingAccountId(actor);
    const reportId = typeof id === 'string' ? id.trim().toLowerCase() : '';
    if (!isId(reportId)) throw notFound('report');
    return this.db.transaction(async (tx) => {
      const row = await findReport(tx.db, reportId);
      if (!row || row.workspaceId === null) throw notFound('report');
      const scope = { workspaceId: row.workspaceId, db: tx.db };
      if (!(await this.authz.can(actor, 'report:view', scope))) throw notFound('report');
      const now = this.clock.now().getTime();
      if (await markReportResolved(tx.db, reportId, 'workspace', now, me)) {
        await this.audit.record(tx, {
          action: 'workspace_report.resolve',
          actorId: me,
          target: `report:${reportId}`,
          details: { serverId: row.workspaceId, subjectKind: row.subjectKind },
        });
      }
      return toView((await findReport(tx.db, reportId)) as ReportRow, 'workspace');
    });
  }

  /**
   * The blob (sha256 hex) of an attachment of a reported encrypted message, for whoever handles
   * the report: the Owner or a Moderator of the report's workspace, or, for a report from the
   * direct space (which has neither), an instance operator. NOT_FOUND for anyone else, for a
   * report of anything else, and for a blob that is not one of the message's attachments.
   */
  async reportedAttachment(actor: Actor, reportId: unknown, blobSha256: unknown) {
    actingAccountId(actor);
    const id = typeof reportId === 'string' ? reportId.trim().toLowerCase() : '';
    if (!isId(id)) throw notFound('report');
    const row = await findReport(this.db.kysely, id);
    if (!row || row.subjectKind !== 'message') throw notFound('report');
    if (row.workspaceId !== null) {
      const scope = { workspaceId: row.workspaceId };
      if (!(await this.authz.can(actor, 'report:view', scope))) throw notFound('report');
    } else {
      try {
        assertInstanceOperator(actor);
      } catch {
        throw notFound('report');
      }
    }
    const snapshot = JSON.parse(row.snapshot) as ReportSnapshot;
    if (snapshot.encrypted !== true) {
      throw notFound('encrypted attachment of this report');
    }
    const sha = typeof blobSha256 === 'string' ? blobSha256 : '';
    if (!/^[A-Za-z0-9_-]{43}$/.test(sha)) {
      throw validation('blob_sha256 must be the SHA-256 of the blob, unpadded base64url');
    }
    const hex = Buffer.from(sha, 'base64url').toString('hex');
    const found = await findMessageAttachmentByBlob(this.db.kysely, row.subjectId, hex);
    if (!found || found.sha256 === null) throw notFound('encrypted attachment of this report');
    return { sha256: found.sha256 };
  }

  private async assertWorkspaceModerator(actor: Actor, serverId: unknown) {
    actingAccountId(actor);
    const id = typeof serverId === 'string' ? serverId : '';
    // The direct space has no moderators and no reports of its own (the operators handle them).
    if (id === DIRECT_SPACE_ID) throw notFound('workspace');
    await this.authz.requireMember(actor, { workspaceId: id });
    if (!(await this.authz.can(actor, 'report:view', { workspaceId: id }))) {
      throw forbidden("only the workspace's owner and Moderators see its reports");
    }
    return id;
  }

  /** Whether the account may read the conversation (the one read rule, conversations/access.ts). */
  private async mayRead(accountId: string, conversationId: string): Promise<boolean> {
    if (!plausibleId(conversationId)) return false;
    const row = await findConversationAccess(this.db.kysely, conversationId, accountId);
    return !!row && canRead(readFactsOf(row), this.clock.now().getTime());
  }
}

/** A page of reports: `after` or `before` a report's cursor, `limit` 1 to REPORT_PAGE_MAX. */
function pageOf(args: KeysetArgs): KeysetPage {
  return parseKeysetArgs(args, { max: REPORT_PAGE_MAX, default: REPORT_PAGE_DEFAULT });
}

function checkReportInput(input: { category: unknown; text?: unknown }): {
  category: ReportCategory;
  text: string | null;
} {
  const category = typeof input.category === 'string' ? input.category.toUpperCase() : '';
  if (!(REPORT_CATEGORIES as readonly string[]).includes(category)) {
    throw validation(`category must be one of ${REPORT_CATEGORIES.join(', ')}`);
  }
  if (input.text !== undefined && input.text !== null && typeof input.text !== 'string') {
    throw validation('text must be a string');
  }
  const text = typeof input.text === 'string' ? input.text.trim() || null : null;
  if (text !== null && [...text].length > REPORT_TEXT_MAX) {
    throw validation(`text must be at most ${REPORT_TEXT_MAX} characters`);
  }
  return { category: category as ReportCategory, text };
}

function toView(row: ReportRow, audience: Audience): ReportView {
  const scoped =
    audience === 'workspace'
      ? { at: row.workspaceResolvedAt, by: row.workspaceResolvedBy }
      : audience === 'instance'
        ? { at: row.resolvedAt, by: row.resolvedBy }
        : {
            at: row.resolvedAt ?? row.workspaceResolvedAt,
            // The reporter learns that it was handled, not by whom.
            by: null,
          };
  const createdAt = Number(row.createdAt);
  return {
    id: row.id,
    cursor: encodeCursor({ at: createdAt, id: row.id }),
    subjectKind: row.subjectKind.toUpperCase() as ReportView['subjectKind'],
    subjectId: row.subjectId,
    category: row.category as ReportCategory,
    text: row.text,
    snapshot: JSON.parse(row.snapshot) as ReportSnapshot,
    serverId: row.workspaceId,
    subjectUsername: row.subjectUsername ?? null,
    reporterId: audience === 'workspace' ? null : row.reporterId,
    reporterUsername: audience === 'workspace' ? null : (row.reporterUsername ?? null),
    createdAt,
    resolved: scoped.at !== null,
    resolvedAt: scoped.at === null ? null : Number(scoped.at),
    resolvedBy: scoped.by,
  };
}
