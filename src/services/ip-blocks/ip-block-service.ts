import { actorId, assertInstanceOperator, type Actor } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import { notFound, validation } from '../../errors.js';
import { cidrContains, CidrSet, normalizeCidr } from '../../lib/address.js';
import { DAY_MS, type Clock } from '../../lib/clock.js';
import type { AuditLog } from '../audit/index.js';

import {
  deleteExpiredIpBlocks,
  deleteIpBlock,
  findIpBlock,
  listIpBlocks,
  upsertIpBlock,
} from './queries.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs } from '../paging/index.js';

export const IP_BLOCK_REASON_MAX = 500;

export interface IpBlockView {
  cidr: string;
  reason: string | null;
  createdAt: number;
  expiresAt: number | null;
  createdBy: string;
}

/**
 * The operator's address deny list. Stored in the database, so the CLI and every process share
 * it; each process keeps a compiled copy that it rereads every few seconds and at once after a
 * change it made itself.
 */
export class IpBlockService {
  private rows: Array<{ cidr: string; expiresAt: number | null }> = [];
  private set = new CidrSet([]);
  private nextExpiry: number | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly refreshMs = 3000,
    /** Every block and unblock writes an audit row and line (CLI and GraphQL alike). */
    private readonly audit: AuditLog,
  ) {}

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => {
      this.refresh().catch(() => {});
    }, this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async refresh(): Promise<void> {
    const now = this.clock.now().getTime();
    this.rows = await listIpBlocks(this.db.kysely, now);
    this.compile(now);
  }

  /** Builds the set from the rows read last, leaving out entries expired by `now`. */
  private compile(now: number): void {
    const live = this.rows.filter((r) => r.expiresAt === null || r.expiresAt > now);
    this.rows = live;
    this.set = new CidrSet(live.map((r) => r.cidr));
    const expiries = live.map((r) => r.expiresAt).filter((e): e is number => e !== null);
    this.nextExpiry = expiries.length ? Math.min(...expiries) : null;
  }

  /** Whether an address is on the deny list now (expiry honoured between refreshes too). */
  isBlocked(address: string): boolean {
    const now = this.clock.now().getTime();
    // An entry expired since the last read: drop it at once rather than wait for the reread.
    if (this.nextExpiry !== null && this.nextExpiry <= now) this.compile(now);
    return this.set.has(address);
  }

  /** Blocks in force, newest first: a page of them, or every one without `args` (the CLI). */
  async list(actor: Actor, args?: KeysetArgs): Promise<IpBlockView[]> {
    assertInstanceOperator(actor);
    const now = this.clock.now().getTime();
    if (!args) return listIpBlocks(this.db.kysely, now);
    const page = parseKeysetArgs(args, { max: 100, default: 100 });
    return keysetRows(await listIpBlocks(this.db.kysely, now, page), page);
  }

  /**
   * Blocks an address or range. Host bits are cleared (`10.1.2.3/8` is stored as `10.0.0.0/8`);
   * blocking a range again replaces its reason and expiry. Operators and the command line only;
   * `callerAddress`, when given, may not fall inside the range (an operator locking
   * themself out through GraphQL is refused with VALIDATION).
   */
  async block(
    actor: Actor,
    input: {
      cidr: string;
      reason?: string | null;
      expiresInDays?: number | null;
      callerAddress?: string | null;
    },
  ): Promise<IpBlockView> {
    assertInstanceOperator(actor);
    const normalized = normalizeCidr(input.cidr);
    if (!normalized) {
      throw validation(
        `"${input.cidr}" is not an IP address or CIDR range (such as 203.0.113.0/24 or 2001:db8::/32)`,
      );
    }
    const reason = input.reason?.trim() || null;
    if (reason && [...reason].length > IP_BLOCK_REASON_MAX) {
      throw validation(`reason must be at most ${IP_BLOCK_REASON_MAX} characters`);
    }
    const days = input.expiresInDays ?? null;
    if (days !== null && (!Number.isInteger(days) || days < 1 || days > 36500)) {
      throw validation('expiresInDays must be a whole number from 1 to 36500');
    }
    if (input.callerAddress && cidrContains(normalized.cidr, input.callerAddress)) {
      throw validation(`${normalized.cidr} contains your own address; you would lock yourself out`);
    }
    const now = this.clock.now().getTime();
    const row = {
      cidr: normalized.cidr,
      reason,
      createdAt: now,
      expiresAt: days === null ? null : now + days * DAY_MS,
      createdBy: actorId(actor),
    };
    await this.db.transaction(async (tx) => {
      await upsertIpBlock(tx.db, row);
      await this.audit.record(tx, {
        action: 'ip.block',
        actorId: row.createdBy,
        target: row.cidr,
        reason,
        details: {
          expiresAt: row.expiresAt === null ? null : new Date(row.expiresAt).toISOString(),
        },
      });
    });
    await this.refresh();
    return row;
  }

  /** Deletes blocks whose expiry has passed (they stopped applying already). */
  async pruneExpired(): Promise<number> {
    return deleteExpiredIpBlocks(this.db.kysely, this.clock.now().getTime());
  }

  /** Lifts a block (NOT_FOUND when none); operators and the command line only. */
  async unblock(actor: Actor, cidr: string): Promise<IpBlockView> {
    assertInstanceOperator(actor);
    const normalized = normalizeCidr(cidr);
    if (!normalized) throw validation(`"${cidr}" is not an IP address or CIDR range`);
    const existing = await this.db.transaction(async (tx) => {
      const row = await findIpBlock(tx.db, normalized.cidr);
      if (!row || !(await deleteIpBlock(tx.db, normalized.cidr))) {
        throw notFound(`address block ${normalized.cidr}`);
      }
      await this.audit.record(tx, {
        action: 'ip.unblock',
        actorId: actorId(actor),
        target: row.cidr,
      });
      return row;
    });
    await this.refresh();
    return existing;
  }
}
