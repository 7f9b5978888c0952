import type { Logger } from 'pino';

import type { Config } from '../config/index.js';
import type { Db } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { findAccountByUsernameKey, insertAccount } from '../services/accounts/index.js';
import { remoteUsernameKey } from '../services/principals/index.js';

import { countLiveRemoteDevices, findRemoteDevice, insertRemoteDevice } from './queries.js';

// The host's local rows for people of other servers (docs/federation.md, "The host side"): an
// account per person and relay, created on their first request, and the devices the relay vouches
// for, within SVC_RELAY_DEVICES_PER_USER.

export interface RemotePeopleDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  config: Config;
}

/** The local row of a person from `relay`, created on their first request. */
export async function remoteAccount(
  deps: RemotePeopleDeps,
  relay: string,
  user: string,
): Promise<string> {
  const usernameKey = `${remoteUsernameKey(user)}@${relay}`;
  const existing = await findAccountByUsernameKey(deps.db.kysely, usernameKey, {
    includeDeleted: true,
  });
  if (existing) {
    if (existing.homeServer?.toLowerCase() !== relay) {
      throw new AppError('FORBIDDEN', `the name ${usernameKey} is taken here`);
    }
    return existing.id;
  }
  const id = newId();
  try {
    await insertAccount(deps.db.kysely, {
      id,
      username: `${user.normalize('NFKC')}@${relay}`,
      usernameKey,
      displayName: null,
      email: null,
      emailKey: null,
      passwordHash: null,
      keyIdentityId: null,
      homeServer: relay,
      isOperator: 0,
      avatarPath: null,
      acceptedTermsUrl: null,
      acceptedTermsAt: null,
      createdAt: deps.clock.now().getTime(),
      deletionRequestedAt: null,
      deletionScheduledFor: null,
      deletedAt: null,
    });
    deps.log.info({ relay, user, accountId: id }, 'person from another server arrived');
    return id;
  } catch (err) {
    if (isUniqueViolation(err)) return remoteAccount(deps, relay, user);
    throw err;
  }
}

/** Records a device the relay vouches for; a revoked one stays refused. */
export async function remoteDevice(
  deps: RemotePeopleDeps,
  accountId: string,
  deviceKey: string,
): Promise<void> {
  const db = deps.db.kysely;
  const row = await findRemoteDevice(db, accountId, deviceKey);
  if (row && row.revokedAt !== null) {
    throw new AppError('UNAUTHENTICATED', 'this device was revoked by its relay');
  }
  if (row) return;
  const cap = deps.config.limits.devicesPerUser;
  if ((await countLiveRemoteDevices(db, accountId)) >= cap) {
    throw new AppError(
      'VALIDATION',
      `a person from another server may use at most ${cap} devices here (SVC_RELAY_DEVICES_PER_USER)`,
    );
  }
  await insertRemoteDevice(db, {
    accountId,
    deviceKey,
    createdAt: deps.clock.now().getTime(),
  });
}
