import { AppError, forbidden, notFound, validation } from '../../errors.js';
import { isId } from '../../lib/ids.js';
import { AreaPart, type AreaDeps } from '../area-deps.js';
import {
  assertReadable,
  plausibleId,
  findConversationAccess,
  toRow,
} from '../conversations/index.js';
import type { DeviceService } from '../devices/index.js';
import type { MessageService } from '../messages/index.js';

/** Largest key package, Welcome or Commit accepted, in base64 characters. */
export const KEY_PACKAGE_MAX_CHARS = 65_536;
export const HANDSHAKE_MAX_CHARS = 1_048_576;
/** Key packages one call may publish. */
export const KEY_PACKAGES_PER_CALL = 100;
/** Below this many unclaimed single-use packages a device is told to publish more. */
export const KEY_PACKAGES_LOW = 10;
export const COMMIT_PAGE_MAX = 100;
export const WELCOME_PAGE_MAX = 100;

/** What the MLS area is built from (build-services.ts). */
export interface MlsServiceDeps extends AreaDeps {
  devices: DeviceService;
  messages: MessageService;
  /** The server's franking key (services/instance/server-keys.ts). */
  frankingKey: Buffer;
}

/** The MLS group_id of a conversation's group of one incarnation. */
export const groupIdOf = (conversationId: string, incarnation: number) =>
  Buffer.from(`svc:${conversationId}:${incarnation}`, 'utf8');

/** The credential identity a device's key packages must carry. */
export const credentialIdentity = (keyIdentityId: string, deviceId: string) =>
  `${keyIdentityId}:${deviceId}`;

export const staleEpoch = (incarnation: number, epoch: number) =>
  new AppError(
    'STALE_EPOCH',
    `the group is at incarnation ${incarnation}, epoch ${epoch}: fetch the Commits and retry`,
    { incarnation, epoch },
  );

export const commitRequired = (reason: 'noGroup' | 'pendingRemovals', message: string) =>
  new AppError('MLS_COMMIT_REQUIRED', message, { reason });

export function idList(value: unknown, what: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > 1000) {
    throw validation(`${what} must be a list of at most 1000 device ids`);
  }
  const out = new Set<string>();
  for (const v of value) {
    if (typeof v !== 'string' || !isId(v)) throw notFound('device');
    out.add(v);
  }
  return [...out];
}

export function intArg(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw validation(`${what} must be a whole number of at least 0`);
  }
  return value;
}

/** A page's `limit`: `fallback` when absent, else a whole number from 1 to `max`. */
export function pageLimit(value: unknown, fallback: number, max: number): number {
  const limit = value ?? fallback;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > max) {
    throw validation(`limit must be a whole number from 1 to ${max}`);
  }
  return limit;
}

/** A part of the MLS area: its dependencies and what every part needs. */
export abstract class MlsPart extends AreaPart<MlsServiceDeps> {
  /** An encrypted conversation the caller is a member of (NOT_FOUND / FORBIDDEN as reading). */
  protected async memberConversation(accountId: string, conversationId: unknown) {
    if (!plausibleId(conversationId)) throw notFound('conversation');
    const row = await findConversationAccess(this.kysely, conversationId, accountId);
    const access = assertReadable(row, this.now());
    if (!access.isMember) throw forbidden('only members take part in the conversation’s group');
    const conv = toRow(access.row);
    if (conv.encrypted !== 1) throw validation('this conversation is not end-to-end encrypted');
    return conv;
  }
}
