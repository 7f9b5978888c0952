import type { Executor } from '../../db/database.js';
import { newId } from '../../lib/ids.js';
import { UNCLAIMED_PASSWORD_HASH, DISPLAY_NAME_MAX, normalizeDisplayName, findAccountByUsernameKey, findLiveAccountByEmailKey, insertAccount, newAccountRow, normalizeEmail, normalizeUsername, USERNAME_MAX } from '../../services/accounts/index.js';

import { clip, type SourcePerson } from './model.js';
import type { CreatedAccount } from './report.js';

// Accounts for the people of an export. Someone whose address already has an account here is
// that account (as Mattermost's and Zulip's importers match people); everyone else gets a new
// account without a password, which they claim with a password reset to their address.

/** A username that keeps to svc's rules, as close to `raw` as they allow. */
export function fitUsername(raw: string): string {
  let name = raw
    .normalize('NFKC')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/([._-])[._-]+/g, '$1')
    .replace(/^[._-]+|[._-]+$/g, '');
  name = name.slice(0, USERNAME_MAX).replace(/[._-]+$/, '');
  try {
    return normalizeUsername(name).username;
  } catch {
    // Too short, reserved (`admin`, `here`), or nothing left of it.
    return normalizeUsername(`user-${name}`.slice(0, USERNAME_MAX).replace(/[._-]+$/, '')).username;
  }
}

/** `name`, or `name-2`, `name-3`, ... : the first not taken here nor by this run. */
async function freeUsername(db: Executor, name: string, taken: Set<string>): Promise<string> {
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? '' : `-${n}`;
    const candidate = name.slice(0, USERNAME_MAX - suffix.length).replace(/[._-]+$/, '') + suffix;
    const key = candidate.toLowerCase();
    if (taken.has(key)) continue;
    if (await findAccountByUsernameKey(db, key, { includeDeleted: true })) continue;
    taken.add(key);
    return candidate;
  }
}

/** The source's display name as svc takes it, or none when it breaks svc's rules. */
function displayName(raw: string | null): string | null {
  try {
    return normalizeDisplayName(clip(raw?.trim() ?? '', DISPLAY_NAME_MAX));
  } catch {
    return null;
  }
}

export interface PeoplePlan {
  /** Account ids by person key, for everyone in the plan. */
  ids: Map<string, string>;
  /** Rows to insert (people without an account here). */
  rows: Parameters<typeof insertAccount>[1][];
  /** People matched to an account by address. */
  matched: number;
  created: CreatedAccount[];
}

/**
 * Decides the account of each person not imported before: the live account with their address,
 * else a new one. Reads only; the caller inserts `rows` with their mappings in one transaction.
 */
export async function planPeople(
  db: Executor,
  people: readonly SourcePerson[],
  now: number,
  taken: Set<string>,
): Promise<PeoplePlan> {
  const plan: PeoplePlan = { ids: new Map(), rows: [], matched: 0, created: [] };
  const emailsTaken = new Set<string>();
  for (const person of people) {
    let email: { email: string; key: string } | null = null;
    try {
      email = normalizeEmail(person.email);
    } catch {
      email = null;
    }
    if (email && !emailsTaken.has(email.key)) {
      const existing = await findLiveAccountByEmailKey(db, email.key);
      if (existing) {
        plan.ids.set(person.key, existing.id);
        plan.matched++;
        continue;
      }
    }
    // Two people of the export with one address: the second gets none (the key is unique).
    if (email && emailsTaken.has(email.key)) email = null;
    if (email) emailsTaken.add(email.key);
    const username = await freeUsername(db, fitUsername(person.username), taken);
    const id = newId();
    plan.ids.set(person.key, id);
    plan.rows.push(
      newAccountRow(
        id,
        {
          username,
          usernameKey: username.toLowerCase(),
          displayName: displayName(person.displayName),
          email,
          passwordHash: UNCLAIMED_PASSWORD_HASH,
        },
        now,
      ),
    );
    plan.created.push({
      username,
      ...(username !== person.username ? { sourceUsername: person.username } : {}),
      email: email?.email ?? null,
      claim: email ? 'password-reset' : 'operator',
    });
  }
  return plan;
}

export async function insertPeople(db: Executor, plan: PeoplePlan): Promise<void> {
  for (const row of plan.rows) await insertAccount(db, row);
}
