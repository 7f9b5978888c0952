import { CompiledQuery, sql } from 'kysely';

import { everyColumn, prefixed } from '../../db/statements/columns.js';
import type { Executor } from '../../db/database.js';
import { shiftPlaceholders } from '../../db/statements/deferred-writes.js';
import { composedStatement, preparedQuery } from '../../db/statements/prepared.js';
import { FIRST_WROTE } from '../../db/statements/write-then.js';
import type { Tx } from '../../db/transaction.js';
import type {
  DeviceLinkOfferTable,
  DeviceTable,
  KeyChallengeTable,
  KeyIdentityTable,
} from '../../db/tables/devices.js';
import type { AccountTable } from '../../db/tables/accounts.js';
import { ACCOUNT_COLUMNS } from '../accounts/index.js';

// ---- challenges

// The statements of a key sign-in (challenge, identity, device, last use) are prepared: a
// connect storm makes them a thousand times a second.

const CHALLENGE_COLUMNS = everyColumn<KeyChallengeTable>()([
  'id',
  'nonce',
  'createdAt',
  'expiresAt',
  'usedAt',
  'serverKey',
]);

export async function insertChallenge(db: Executor, row: KeyChallengeTable) {
  await insertChallengeQuery(db, ...CHALLENGE_COLUMNS.map((c) => row[c]));
}

const insertChallengeQuery = preparedQuery(CHALLENGE_COLUMNS.length, (db, ...values: unknown[]) =>
  db
    .insertInto('key_challenge')
    .values(
      Object.fromEntries(
        CHALLENGE_COLUMNS.map((c, i) => [c, values[i]]),
      ) as unknown as KeyChallengeTable,
    ),
);

/** A challenge just spent: its nonce and the server key it was issued under. */
export interface SpentChallenge {
  nonce: string;
  serverKey: string | null;
}

/**
 * Marks a live, unused challenge used; its nonce and the server key it was issued under, or
 * undefined when it was not usable.
 */
export async function useChallenge(
  db: Executor,
  id: string,
  now: number,
): Promise<SpentChallenge | undefined> {
  return (await useChallengeQuery(db, id, now)).rows[0];
}

const useChallengeQuery = preparedQuery(2, (db, id: string, now: number) =>
  db
    .updateTable('key_challenge')
    .set({ usedAt: now })
    .where('id', '=', id)
    .where('usedAt', 'is', null)
    .where('expiresAt', '>', now)
    .returning(['nonce', 'serverKey']),
);

export async function findChallenge(db: Executor, id: string) {
  return db.selectFrom('key_challenge').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function deleteChallengesBefore(db: Executor, before: number) {
  await db.deleteFrom('key_challenge').where('expiresAt', '<', before).execute();
}

// ---- key identities

export async function insertKeyIdentity(db: Executor, row: KeyIdentityTable) {
  await db.insertInto('key_identity').values(row).execute();
}

export async function findKeyIdentity(db: Executor, id: string) {
  return (await findKeyIdentityQuery(db, id)).rows[0];
}

const findKeyIdentityQuery = preparedQuery(1, (db, id: string) =>
  db
    .selectFrom('key_identity')
    .innerJoin('account', 'account.id', 'key_identity.accountId')
    .select([
      'key_identity.id',
      'key_identity.accountId',
      'key_identity.publicKey',
      'key_identity.createdAt',
      'key_identity.retiredAt',
      'account.deletedAt as accountDeletedAt',
    ])
    .where('key_identity.id', '=', id),
);

/** The account's current (not retired) identity. */
export async function findCurrentKeyIdentity(db: Executor, accountId: string) {
  return db
    .selectFrom('key_identity')
    .selectAll()
    .where('accountId', '=', accountId)
    .where('retiredAt', 'is', null)
    .executeTakeFirst();
}

export async function retireKeyIdentity(db: Executor, id: string, now: number, replacedBy: string) {
  const res = await db
    .updateTable('key_identity')
    .set({ retiredAt: now, replacedBy })
    .where('id', '=', id)
    .where('retiredAt', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

// ---- devices

export async function insertDevice(db: Executor, row: DeviceTable) {
  await db.insertInto('device').values(row).execute();
}

/** Whether any device, revoked ones included, has this key. */
export async function deviceKeyRegistered(db: Executor, publicKey: string) {
  const row = await db
    .selectFrom('device')
    .select('id')
    .where('publicKey', '=', publicKey)
    .executeTakeFirst();
  return row !== undefined;
}

/** What a key sign-in needs of the device it names, and that device's account. */
export interface SigningDevice {
  device: Pick<DeviceTable, 'id' | 'accountId' | 'publicKey' | 'revokedAt'>;
  account: AccountTable;
}

const signingDevice = (db: Executor) =>
  db
    .selectFrom('device as d')
    .innerJoin('account as a', 'a.id', 'd.accountId')
    .select([
      'd.id as deviceId',
      'd.publicKey as devicePublicKey',
      'd.revokedAt as deviceRevokedAt',
      ...prefixed('a', ACCOUNT_COLUMNS),
    ]);

const signingDeviceByKeyQuery = preparedQuery(1, (db, publicKey: string) =>
  signingDevice(db).where('d.publicKey', '=', publicKey),
);

const signingDeviceByIdQuery = preparedQuery(1, (db, id: string) =>
  signingDevice(db).where('d.id', '=', id),
);

/**
 * The device a key sign-in names, by its public key or its id, read with its account in one
 * statement (revoked devices and deleted accounts too: the caller decides).
 */
export async function findSigningDevice(
  db: Executor,
  by: { publicKey: string } | { id: string },
): Promise<SigningDevice | undefined> {
  const { rows } =
    'publicKey' in by
      ? await signingDeviceByKeyQuery(db, by.publicKey)
      : await signingDeviceByIdQuery(db, by.id);
  const row = rows[0];
  return row ? toSigningDevice(row) : undefined;
}

type SigningRow = Awaited<ReturnType<typeof signingDeviceByKeyQuery>>['rows'][number];

function toSigningDevice(row: SigningRow): SigningDevice {
  const { deviceId, devicePublicKey, deviceRevokedAt, ...account } = row;
  return {
    device: {
      id: deviceId,
      accountId: account.id,
      publicKey: devicePublicKey,
      revokedAt: deviceRevokedAt,
    },
    account,
  };
}

/** The columns of a signing device's read (`signingDevice`), in its order. */
const SIGNING_COLUMNS = ['deviceId', 'devicePublicKey', 'deviceRevokedAt', ...ACCOUNT_COLUMNS];

/**
 * PostgreSQL: the challenge spent (as `useChallenge`) and the device a key sign-in names read
 * with its account (as `findSigningDevice`), in one statement: a round trip fewer per sign-in.
 * The challenge is spent whatever the read finds. Named, as both parts are (db/statements/prepared.ts).
 */
export async function spendChallengeFindingDevice(
  db: Executor,
  challenge: { id: string; now: number },
  by: { publicKey: string } | { id: string },
): Promise<{ spent: SpentChallenge | undefined; found?: SigningDevice }> {
  const spend = useChallengeQuery.statement(db, challenge.id, challenge.now);
  const read =
    'publicKey' in by
      ? signingDeviceByKeyQuery.statement(db, by.publicKey)
      : signingDeviceByIdQuery.statement(db, by.id);
  const text = composedStatement(
    'spendChallengeFindingDevice',
    [spend.sql, read.sql],
    () =>
      `with spent as (${spend.sql}) ` +
      `select spent."nonce" as "spentNonce", spent."serverKey" as "spentServerKey", ` +
      `${SIGNING_COLUMNS.map((c) => `found."${c}"`).join(', ')} ` +
      `from (select 1) as one left join spent on true ` +
      `left join (${shiftPlaceholders(read.sql, spend.parameters.length)}) as found on true`,
  );
  const { rows } = await db.executeQuery<
    SigningRow & { spentNonce: string | null; spentServerKey: string | null }
  >(CompiledQuery.raw(text, [...spend.parameters, ...read.parameters]));
  const { spentNonce, spentServerKey, ...device } = rows[0]!;
  return {
    spent: spentNonce === null ? undefined : { nonce: spentNonce, serverKey: spentServerKey },
    found: device.deviceId === null ? undefined : toSigningDevice(device),
  };
}

export async function findDeviceById(db: Executor, id: string) {
  return db.selectFrom('device').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listActiveDevices(db: Executor, accountId: string) {
  return db
    .selectFrom('device')
    .selectAll()
    .where('accountId', '=', accountId)
    .where('revokedAt', 'is', null)
    .orderBy('createdAt', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

export async function countActiveDevices(db: Executor, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('device')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('accountId', '=', accountId)
    .where('revokedAt', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function revokeDeviceRow(db: Executor, id: string, now: number) {
  const res = await db
    .updateTable('device')
    .set({ revokedAt: now, keyPackage: null, keyPackageAt: null })
    .where('id', '=', id)
    .where('revokedAt', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** The device's last use, written with the transaction's other deferred writes (`tx.defer`). */
export function deferTouchDevice(tx: Tx, id: string, now: number) {
  return tx.defer(touchDeviceQuery.statement(tx.db, id, now));
}

const touchDeviceQuery = preparedQuery(2, (db, id: string, now: number) =>
  db.updateTable('device').set({ lastUsedAt: now }).where('id', '=', id),
);

/** The same, for `writeThen` (PostgreSQL): only when the write before it wrote a row. */
export function touchDeviceAfterStatement(db: Executor, id: string, now: number) {
  return touchDeviceAfterQuery.statement(db, id, now);
}

const touchDeviceAfterQuery = preparedQuery(2, (db, id: string, now: number) =>
  db.updateTable('device').set({ lastUsedAt: now }).where('id', '=', id).where(FIRST_WROTE),
);

export async function setKeyPackage(db: Executor, id: string, keyPackage: string, now: number) {
  await db
    .updateTable('device')
    .set({ keyPackage, keyPackageAt: now })
    .where('id', '=', id)
    .execute();
}

export async function accountHasEncryptionDevice(db: Executor, accountId: string) {
  const row = await db
    .selectFrom('device')
    .select('id')
    .where('accountId', '=', accountId)
    .where('revokedAt', 'is', null)
    .where('keyPackage', 'is not', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Serialises writers of one account's devices on PostgreSQL (a row lock held to commit), so two
 * approvals cannot both pass the device cap. SQLite runs one writer at a time anyway.
 */
export async function lockAccount(db: Executor, accountId: string, dialect: 'sqlite' | 'postgres') {
  if (dialect !== 'postgres') return;
  await sql`select id from account where id = ${accountId} for update`.execute(db);
}

// ---- device-link offers

export async function insertLinkOffer(db: Executor, row: DeviceLinkOfferTable) {
  await db.insertInto('device_link_offer').values(row).execute();
}

export async function findLinkOffer(db: Executor, id: string) {
  return db.selectFrom('device_link_offer').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listPendingLinkOffers(db: Executor, accountId: string, now: number) {
  return db
    .selectFrom('device_link_offer')
    .selectAll()
    .where('accountId', '=', accountId)
    .where('state', '=', 'pending')
    .where('expiresAt', '>', now)
    .orderBy('createdAt', 'asc')
    .execute();
}

/** Whether a pending, unexpired offer already carries this device key. */
export async function pendingOfferForKey(db: Executor, publicKey: string, now: number) {
  return db
    .selectFrom('device_link_offer')
    .select(['id', 'accountId'])
    .where('publicKey', '=', publicKey)
    .where('state', '=', 'pending')
    .where('expiresAt', '>', now)
    .executeTakeFirst();
}

/** Moves a pending offer to `state`; false when it was no longer pending. */
export async function resolveLinkOffer(
  db: Executor,
  id: string,
  state: 'approved' | 'cancelled',
  now: number,
  deviceId: string | null = null,
) {
  const res = await db
    .updateTable('device_link_offer')
    .set({ state, resolvedAt: now, deviceId })
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Counts a wrong code; cancels the offer once `max` wrong codes were given. */
export async function recordWrongCode(db: Executor, id: string, max: number, now: number) {
  await db
    .updateTable('device_link_offer')
    .set((eb) => ({ failedAttempts: eb('failedAttempts', '+', 1) }))
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .execute();
  await db
    .updateTable('device_link_offer')
    .set({ state: 'cancelled', resolvedAt: now })
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .where('failedAttempts', '>=', max)
    .execute();
}

export async function deleteLinkOffersBefore(db: Executor, before: number) {
  await db.deleteFrom('device_link_offer').where('expiresAt', '<', before).execute();
}

/**
 * The account's device link offers and devices, and its identity keys (its purge). The identity
 * ids stay (the same identity can never sign up again); the keys go.
 */
export async function deleteDevicesOf(db: Executor, accountId: string) {
  await db.deleteFrom('device_link_offer').where('accountId', '=', accountId).execute();
  await db.deleteFrom('device').where('accountId', '=', accountId).execute();
  await db
    .updateTable('key_identity')
    .set({ publicKey: null })
    .where('accountId', '=', accountId)
    .execute();
}
