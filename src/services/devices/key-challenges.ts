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

import {
  deleteChallengesBefore,
  findChallenge,
  insertChallenge,
  useChallenge,
  type SpentChallenge,
} from './queries.js';

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

/** A statement's request, its shape checked (`KeyChallenges.request`). */
export interface StatementRequest {
  challengeId: string;
  issuedAt: string;
  signatures: Buffer[];
  now: number;
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
    const request = this.request(input);
    return this.conclude(request, await this.spend(request), input);
  }

  /**
   * The first step of `verify`, apart for a caller that spends the challenge in a statement of
   * its own (`spendChallengeFindingDevice`): the request's shape, checked before anything is
   * spent or read.
   */
  request(input: {
    challengeId: unknown;
    issuedAt: unknown;
    signers: ReadonlyArray<Pick<Signer, 'field' | 'signature'>>;
  }): StatementRequest {
    if (typeof input.challengeId !== 'string' || !isId(input.challengeId)) {
      throw validation('challengeId must be the id keyLoginChallenge answered');
    }
    const signatures = input.signers.map((s) => parseSignature(s.signature, s.field));
    const now = this.clock.now().getTime();
    const issuedAt = checkIssuedAt(input.issuedAt, now);
    return { challengeId: input.challengeId, issuedAt, signatures, now };
  }

  /** Spends the request's challenge: its nonce and server key, or undefined when not usable. */
  async spend(request: StatementRequest): Promise<SpentChallenge | undefined> {
    return useChallenge(this.db.kysely, request.challengeId, request.now);
  }

  /**
   * The last step of `verify`: refuses a challenge that was not spendable (saying why), then
   * checks every signer's signature over the statement.
   */
  async conclude(
    request: StatementRequest,
    spent: SpentChallenge | undefined,
    input: {
      audience: StatementAudience;
      extra: ReadonlyArray<readonly [string, string]>;
      signers: ReadonlyArray<Pick<Signer, 'publicKey' | 'field'>>;
    },
  ): Promise<string> {
    if (!spent) {
      const row = await findChallenge(this.db.kysely, request.challengeId);
      if (!row) throw failed('unknown challenge; ask keyLoginChallenge for a new one');
      if (row.usedAt !== null) throw failed('this challenge was used already; ask for a new one');
      throw failed('this challenge has expired; ask for a new one');
    }
    const statement = buildStatement({
      audience: input.audience,
      // The key the client was given with the challenge, even when a rotation came in between.
      server: spent.serverKey ?? this.serverKey(),
      nonce: spent.nonce,
      issuedAt: request.issuedAt,
      extra: input.extra,
    });
    input.signers.forEach((signer, i) => {
      if (!verifyStatement(signer.publicKey, statement, request.signatures[i]!)) {
        throw failed(
          `${signer.field} is not a signature of the ${input.audience} statement by that key`,
        );
      }
    });
    return statement;
  }
}
