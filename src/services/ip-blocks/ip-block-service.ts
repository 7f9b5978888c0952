import type { Db } from '../../db/database.js';
import { notFound, validation } from '../../errors.js';
import { CidrSet, normalizeCidr } from '../../lib/address.js';
import { DAY_MS, type Clock } from '../../lib/clock.js';

import {
  deleteExpiredIpBlocks,
  deleteIpBlock,
  findIpBlock,
  listIpBlocks,
  upsertIpBlock,
} from './queries.js';

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
  private set = new CidrSet([]);
  private nextExpiry: number | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly refreshMs = 3000,
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
    const rows = await listIpBlocks(this.db.kysely, this.clock.now().getTime());
    this.set = new CidrSet(rows.map((r) => r.cidr));
    const expiries = rows.map((r) => r.expiresAt).filter((e): e is number => e !== null);
    this.nextExpiry = expiries.length ? Math.min(...expiries) : null;
  }

  /** Whether an address is on the deny list now (expiry honoured between refreshes too). */
  isBlocked(address: string): boolean {
    if (this.nextExpiry !== null && this.nextExpiry <= this.clock.now().getTime()) {
      // An entry expired since the last read: reread before answering from a stale set.
      this.nextExpiry = null;
      this.refresh().catch(() => {});
    }
    return this.set.has(address);
  }

  async list(): Promise<IpBlockView[]> {
    return listIpBlocks(this.db.kysely, this.clock.now().getTime());
  }

  /**
   * Blocks an address or range. Host bits are cleared (`10.1.2.3/8` is stored as `10.0.0.0/8`);
   * blocking a range again replaces its reason and expiry.
   */
  async block(input: {
    cidr: string;
    reason?: string | null;
    expiresInDays?: number | null;
    actor: string;
  }): Promise<IpBlockView> {
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
    const now = this.clock.now().getTime();
    const row = {
      cidr: normalized.cidr,
      reason,
      createdAt: now,
      expiresAt: days === null ? null : now + days * DAY_MS,
      createdBy: input.actor,
    };
    await upsertIpBlock(this.db.kysely, row);
    await this.refresh();
    return row;
  }

  /** Deletes blocks whose expiry has passed (they stopped applying already). */
  async pruneExpired(): Promise<number> {
    return deleteExpiredIpBlocks(this.db.kysely, this.clock.now().getTime());
  }

  async unblock(cidr: string): Promise<IpBlockView> {
    const normalized = normalizeCidr(cidr);
    if (!normalized) throw validation(`"${cidr}" is not an IP address or CIDR range`);
    const existing = await findIpBlock(this.db.kysely, normalized.cidr);
    if (!existing || !(await deleteIpBlock(this.db.kysely, normalized.cidr))) {
      throw notFound(`address block ${normalized.cidr}`);
    }
    await this.refresh();
    return existing;
  }
}
