import { createHash, randomBytes } from 'node:crypto';

import type { Db } from '../../db/database.js';
import { AppError } from '../../errors.js';
import { MINUTE_MS } from '../../lib/clock.js';

import { canonicalJson } from './args.js';
import { findConfirmation, insertConfirmation, useConfirmation } from './queries.js';

/** How long a confirmation token may be used. */
export const CONFIRMATION_TTL_MS = 5 * MINUTE_MS;

/** What a confirmation is bound to, besides the caller. */
export interface ConfirmationSubject {
  /** `command:<name>@<source>` or `macro:<id>`. */
  what: string;
  args: unknown;
  context: { workspaceId: string | null; conversationId: string | null };
  /** A macro's expanded steps, so a macro edited after the confirmation is not covered. */
  steps?: unknown;
}

const sha = (s: string) => createHash('sha256').update(s).digest('base64url');

export const stale = () =>
  new AppError(
    'CONFIRMATION_STALE',
    'this confirmation expired or was already used; run the command again for a new one',
  );
export const failed = () =>
  new AppError(
    'CONFIRMATION_FAILED',
    'this confirmation was made for another command, arguments, context or person',
  );

/**
 * Confirmations of destructive runs: a random token, stored as its hash, bound to the person,
 * the command (or macro), its arguments and the context; single-use and short-lived.
 */
export class Confirmations {
  constructor(private readonly db: Db) {}

  /** Issues a token for the subject; answers it and its expiry. */
  async issue(
    accountId: string,
    subject: ConfirmationSubject,
    now: number,
  ): Promise<{ token: string; expiresAt: number }> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = now + CONFIRMATION_TTL_MS;
    await this.db.transaction((tx) =>
      insertConfirmation(tx.db, {
        tokenHash: sha(token),
        accountId,
        binding: sha(canonicalJson(subject)),
        createdAt: now,
        expiresAt,
        usedAt: null,
      }),
    );
    return { token, expiresAt };
  }

  /**
   * Spends a token for the subject. CONFIRMATION_FAILED for an unknown token or one made for
   * another person or subject (checked first, so nothing is told about another's token);
   * CONFIRMATION_STALE for an expired or already used one.
   */
  async spend(token: unknown, accountId: string, subject: ConfirmationSubject, now: number) {
    if (typeof token !== 'string' || token.length === 0 || token.length > 100) throw failed();
    const hash = sha(token);
    const row = await findConfirmation(this.db.kysely, hash);
    if (!row || row.accountId !== accountId || row.binding !== sha(canonicalJson(subject))) {
      throw failed();
    }
    if (row.usedAt !== null || row.expiresAt <= now) throw stale();
    const used = await this.db.transaction((tx) => useConfirmation(tx.db, hash, now));
    if (!used) throw stale();
  }
}
