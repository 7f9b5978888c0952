import { parsePublicKey } from '../../auth/device-keys.js';
import type { Executor } from '../../db/database.js';
import type { DeviceTable } from '../../db/tables/devices.js';
import { capExceeded, conflict, validation } from '../../errors.js';
import { assertLocalAccount } from '../accounts/index.js';
import type { SessionInfo } from '../../auth/session.js';

import { deviceKeyRegistered } from './queries.js';

export const DEVICE_NAME_MAX = 64;
export const DEFAULT_DEVICE_NAME = 'Unnamed device';

/** A device as the API shows it. */
export interface DeviceView {
  id: string;
  accountId: string;
  name: string;
  publicKey: string;
  createdAt: number;
  lastUsedAt: number | null;
  encryptionReady: boolean;
}

export const deviceView = (row: DeviceTable): DeviceView => ({
  id: row.id,
  accountId: row.accountId,
  name: row.name,
  publicKey: row.publicKey,
  createdAt: row.createdAt,
  lastUsedAt: row.lastUsedAt,
  encryptionReady: row.keyPackage !== null,
});

/** A new device's row: live, with no key package yet; `lastUsedAt` when it signs in now. */
export function newDeviceRow(
  id: string,
  accountId: string,
  publicKey: string,
  name: string,
  createdAt: number,
  lastUsedAt: number | null,
): DeviceTable {
  return {
    id,
    accountId,
    publicKey,
    name,
    createdAt,
    lastUsedAt,
    revokedAt: null,
    keyPackage: null,
    keyPackageAt: null,
  };
}

/** A device name: trimmed, 1 to 64 characters, no control characters; a default when absent. */
export function checkDeviceName(value: unknown): string {
  if (value === undefined || value === null) return DEFAULT_DEVICE_NAME;
  if (typeof value !== 'string') throw validation('deviceName must be a string');
  const name = value.normalize('NFC').trim();
  if (name.length === 0) return DEFAULT_DEVICE_NAME;
  if ([...name].length > DEVICE_NAME_MAX) {
    throw validation(`deviceName must be at most ${DEVICE_NAME_MAX} characters long`);
  }
  if (/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(name)) {
    throw validation('deviceName may not contain control or formatting characters');
  }
  return name;
}

/** A person from another server manages their keys and devices at their relay. */
export const assertLocal = (session: Pick<SessionInfo, 'homeServer'>): void =>
  assertLocalAccount(session);

/** VALIDATION naming the cap: the stricter of the instance cap and the relay quota. */
export function assertDeviceRoom(count: number, cap: number): void {
  if (count >= cap) {
    throw capExceeded(
      'devices per user',
      'SVC_LIMIT_DEVICES_PER_USER, or the relay quota SVC_RELAY_DEVICES_PER_USER',
      cap,
    );
  }
}

/** A new device's key is one no device holds, revoked or not. */
export async function assertDeviceKeyFree(db: Executor, deviceKey: string): Promise<void> {
  if (await deviceKeyRegistered(db, deviceKey)) {
    throw conflict('this device key is registered already; make a new key for a new device');
  }
}

/** An identity key with its first device's key: two well-formed keys, and not the same one. */
export function parseKeyPair(input: { identityPublicKey: unknown; devicePublicKey: unknown }) {
  const identityKey = parsePublicKey(input.identityPublicKey, 'identityPublicKey');
  const deviceKey = parsePublicKey(input.devicePublicKey, 'devicePublicKey');
  if (identityKey === deviceKey) {
    throw validation('the identity key and the device key must be different keys');
  }
  return { identityKey, deviceKey };
}
