import {
  buildStatement,
  checkIssuedAt,
  parseSignature,
  verifyStatement,
  type StatementAudience,
} from '../../auth/device-keys.js';
import type { Db } from '../../db/database.js';
import { AppError, validation } from '../../errors.js';
import { HOUR_MS, MINUTE_MS, type Clock } from '../../lib/clock.js';
import { isId, newId, randomToken } from '../../lib/ids.js';

import { deleteChallengesBefore, findChallenge, insertChallenge, useChallenge } from './queries.js';

/** How long a challenge may be signed and spent. */
export const CHALLENGE_TTL_MS = 2 * MINUTE_MS;
/** Spent and expired challenges are deleted at most this often (per process). */
const SWEEP_EVERY_MS = MINUTE_MS;

export interface KeyChallengeView {
  challengeId: string;
  nonce: string;
  expiresAt: number;
  serverKey: string;
}

/** One signer of a statement: its public key, the request field and the signature given. */
export interface Signer {
  publicKey: string;
  field: string;
  signature: unknown;
}

const failed = (message: string) => new AppError('UNAUTHENTICATED', message);

/**
 * Single-use challenges and the signed statements over them (docs/keys.md). Every statement
 * check spends its challenge first, so a failed attempt cannot be retried with the same nonce.
 */
export class KeyChallenges {
  private lastSweep = -Infinity;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /**
     * The server's current signing key, raw base64url: the statement's `server:` line. Read at
     * each challenge, so a rotation (`svc server-key rotate`, taken up by the key log's refresh)
     * shows in the next challenge without a restart.
     */
    private readonly serverKey: () => string,
  ) {}

  async issue(): Promise<KeyChallengeView> {
    const now = this.clock.now().getTime();
    const row = {
      id: newId(),
      nonce: randomToken(32),
      createdAt: now,
      expiresAt: now + CHALLENGE_TTL_MS,
      usedAt: null,
      serverKey: this.serverKey(),
    };
    // Spent and expired challenges are worth nothing; an hour's margin keeps the answer
    // "already used" (rather than "unknown") for a client that retries soon after. Swept at
    // most once a minute, not by every challenge (a sign-in storm asks for thousands).
    if (now - this.lastSweep >= SWEEP_EVERY_MS) {
      this.lastSweep = now;
      await deleteChallengesBefore(this.db.kysely, now - HOUR_MS);
    }
    await insertChallenge(this.db.kysely, row);
    return {
      challengeId: row.id,
      nonce: row.nonce,
      expiresAt: row.expiresAt,
      serverKey: row.serverKey,
    };
  }

  /**
   * Checks the request's shape (VALIDATION), spends the challenge and verifies every signer's
   * signature over the statement (UNAUTHENTICATED). Answers the statement that was signed.
   */
  async verify(input: {
    audience: StatementAudience;
    challengeId: unknown;
    issuedAt: unknown;
    extra: ReadonlyArray<readonly [string, string]>;
    signers: Signer[];
  }): Promise<string> {
    if (typeof input.challengeId !== 'string' || !isId(input.challengeId)) {
      throw validation('challengeId must be the id keyLoginChallenge answered');
    }
    const signatures = input.signers.map((s) => parseSignature(s.signature, s.field));
    const now = this.clock.now().getTime();
    const issuedAt = checkIssuedAt(input.issuedAt, now);
    const { nonce, serverKey } = await this.spend(input.challengeId, now);
    const statement = buildStatement({
      audience: input.audience,
      // The key the client was given with the challenge, even when a rotation came in between.
      server: serverKey ?? this.serverKey(),
      nonce,
      issuedAt,
      extra: input.extra,
    });
    input.signers.forEach((signer, i) => {
      if (!verifyStatement(signer.publicKey, statement, signatures[i]!)) {
        throw failed(
          `${signer.field} is not a signature of the ${input.audience} statement by that key`,
        );
      }
    });
    return statement;
  }

  private async spend(
    id: string,
    now: number,
  ): Promise<{ nonce: string; serverKey: string | null }> {
    const used = await useChallenge(this.db.kysely, id, now);
    if (used) return used;
    const row = await findChallenge(this.db.kysely, id);
    if (!row) throw failed('unknown challenge; ask keyLoginChallenge for a new one');
    if (row.usedAt !== null) throw failed('this challenge was used already; ask for a new one');
    throw failed('this challenge has expired; ask for a new one');
  }
}
