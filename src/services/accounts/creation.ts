import type { Db } from '../../db/database.js';
import type { AccountTable } from '../../db/tables/accounts.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { Tx } from '../../db/transaction.js';
import { AppError, conflict, notFound } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';

import { toAccountView, type AccountView } from './account-view.js';
import { hashPassword } from './passwords.js';
import { normalizeDisplayName } from './profile.js';
import {
  findAccountByEmailKey,
  findAccountById,
  findAccountByUsernameKey,
  insertAccount,
} from './queries.js';
import { checkPassword, normalizeEmail, normalizeUsername } from './username.js';

// Creating an account needs only the database and a clock: AccountService delegates here, and
// `svc account create` calls it without building the rest of the server (docs/cli.md).

/** The fields a new account row takes; the rest start empty. */
export interface NewAccount {
  /** Already normalized (normalizeUsername). */
  username: string;
  usernameKey: string;
  passwordHash: string | null;
  keyIdentityId?: string | null;
  displayName?: string | null;
  email?: { email: string; key: string } | null;
}

/** A new local account's row: what `input` gives, the rest empty. */
export function newAccountRow(id: string, input: NewAccount, createdAt: number): AccountTable {
  return {
    id,
    username: input.username,
    usernameKey: input.usernameKey,
    displayName: input.displayName ?? null,
    email: input.email?.email ?? null,
    emailKey: input.email?.key ?? null,
    passwordHash: input.passwordHash,
    keyIdentityId: input.keyIdentityId ?? null,
    homeServer: null,
    isOperator: 0,
    avatarPath: null,
    acceptedTermsUrl: null,
    acceptedTermsAt: null,
    createdAt,
    deletionRequestedAt: null,
    deletionScheduledFor: null,
    deletedAt: null,
  };
}

/**
 * Inserts an account row in the caller's transaction; CONFLICT when the username is taken,
 * EMAIL_TAKEN when the address is. Signups of both kinds, imports and the CLI go through here.
 */
export async function insertNewAccount(tx: Tx, clock: Clock, input: NewAccount): Promise<string> {
  const id = newId();
  if (await findAccountByUsernameKey(tx.db, input.usernameKey, { includeDeleted: true })) {
    throw usernameTaken(input.username);
  }
  if (input.email && (await findAccountByEmailKey(tx.db, input.email.key))) throw emailTaken();
  try {
    await insertAccount(tx.db, newAccountRow(id, input, clock.now().getTime()));
  } catch (err) {
    // Two signups racing for one name or address: the loser gets the same answer as if it
    // had come second.
    if (isUniqueViolation(err)) throw usernameTaken(input.username);
    throw err;
  }
  return id;
}

/** Creates a password account (the CLI's `account create`). */
export async function createPasswordAccount(
  db: Db,
  clock: Clock,
  input: { username: unknown; password: unknown; email?: unknown; displayName?: string | null },
): Promise<AccountView> {
  const { username, key } = normalizeUsername(input.username);
  const password = checkPassword(input.password);
  const email = normalizeEmail(input.email);
  const displayName = normalizeDisplayName(input.displayName);
  const passwordHash = await hashPassword(password);
  const id = await db.transaction((tx) =>
    insertNewAccount(tx, clock, { username, usernameKey: key, passwordHash, email, displayName }),
  );
  return getAccountView(db, id);
}

/** The account's view; NOT_FOUND when it does not exist or is deleted. */
export async function getAccountView(db: Db, id: string): Promise<AccountView> {
  const row = await findAccountById(db.kysely, id);
  if (!row || row.deletedAt !== null) throw notFound('account');
  return toAccountView(row);
}

const usernameTaken = (username: string) => conflict(`the username "${username}" is taken`);
const emailTaken = () =>
  new AppError('EMAIL_TAKEN', 'another account already uses this email address');
