import { actingAccountId, type Actor } from '../../auth/actor.js';
import { assertFeature } from '../../config/feature-guard.js';
import { featureEnabled, type Config } from '../../config/index.js';
import type { CustomEmojiTable } from '../../db/tables/emoji.js';
import type { Db } from '../../db/database.js';
import type { Tx } from '../../db/transaction.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import { isUniqueViolation } from '../../db/errors.js';
import { AppError, capExceeded, conflict, notFound, validation } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { Authz } from '../authz/index.js';
import {
  imagePath,
  imagePathsOf,
  imageUrl,
  namesOfImagePaths,
  receiveToTemp,
  storeReencodedImage,
  UploadRefused,
  type FileStorage,
  type StoredImage,
} from '../files/index.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs } from '../paging/index.js';

import {
  countCustomEmoji,
  deleteCustomEmoji,
  deleteWorkspaceEmoji,
  emojiImageInUse,
  emojiImagePathsAmong,
  findCustomEmoji,
  insertCustomEmoji,
  customEmojiPage,
} from './queries.js';

/** Largest emoji image, as uploaded (Slack's limit is 128 KB, Discord's 256 KiB). */
export const EMOJI_MAX_BYTES = 256 * 1024;
/** Emoji images are scaled to fit this square (never enlarged). */
export const EMOJI_MAX_SIDE = 128;
/** Custom emoji one workspace may hold. */
export const EMOJI_PER_WORKSPACE = 1000;
/** A name: 2 to 32 of `a-z 0-9 _ + -`, stored case-folded. */
export const EMOJI_NAME = /^[a-z0-9_+-]{2,32}$/;
/** A custom emoji as written in text and reactions. */
export const EMOJI_SHORTCODE = /^:([a-z0-9_+-]{2,32}):$/;

/** The longest base64 text that can hold EMOJI_MAX_BYTES. */
const BASE64_MAX_CHARS = Math.ceil(EMOJI_MAX_BYTES / 3) * 4;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A custom emoji as the GraphQL `CustomEmoji` type takes it. */
export interface CustomEmojiView {
  id: string;
  serverId: string;
  name: string;
  shortcode: string;
  url: string;
  contentType: string;
  width: number;
  height: number;
  createdById: string | null;
  createdAt: number;
}

/** What the message area asks about `:name:` reactions (the EmojiLookup port). */
export interface EmojiLookup {
  /** FEATURE_DISABLED while `custom_emoji` is off. */
  assertEnabled(): void;
  /** Whether the workspace has a custom emoji of this (case-folded) name. */
  has(workspaceId: string, name: string): Promise<boolean>;
}

export interface EmojiServiceDeps {
  db: Db;
  config: Config;
  clock: Clock;
  authz: Authz;
  files: FileStorage;
}

/**
 * Custom emoji of a workspace (docs/files.md, "Custom emoji"), behind the `custom_emoji`
 * feature: listed for members, added and deleted by its Moderators and owner. The image is
 * re-encoded into the blob store and served under `/api/files/avatars/...`; the area keeps its
 * blobs alive through the `custom_emoji` reference source and deletes its rows with the
 * workspace. Switching the feature off deletes nothing.
 */
export class EmojiService implements EmojiLookup {
  constructor(private readonly deps: EmojiServiceDeps) {}

  /** The blob names among `names` that custom emoji still hold (a blob reference source). */
  async referencedBlobs(names: string[]): Promise<string[]> {
    return namesOfImagePaths(await emojiImagePathsAmong(this.deps.db.kysely, imagePathsOf(names)));
  }

  /** Workspace deletion: its custom emoji rows (the blobs go with the next sweep). */
  async onWorkspaceDeleted(tx: Tx, workspaceId: string): Promise<void> {
    await deleteWorkspaceEmoji(tx.db, workspaceId);
  }

  assertEnabled(): void {
    assertFeature(this.deps.config, 'custom_emoji');
  }

  /**
   * A page of a workspace's emoji, oldest first, for any member (guests too). The default page
   * holds as many as a workspace may have, so a caller that does not page gets them all.
   */
  async list(actor: Actor, serverId: string, args: KeysetArgs = {}): Promise<CustomEmojiView[]> {
    this.assertEnabled();
    const page = parseKeysetArgs(args, {
      max: EMOJI_PER_WORKSPACE,
      default: EMOJI_PER_WORKSPACE,
    });
    refuseDirectSpace(serverId);
    await this.deps.authz.assertCan(actor, 'workspace:read', { workspaceId: serverId });
    const rows = await customEmojiPage(this.deps.db.kysely, serverId, page);
    return keysetRows(rows, page).map(toView);
  }

  /**
   * Adds an emoji (Moderator and up). The image arrives as base64 in the mutation (at most
   * EMOJI_MAX_BYTES decoded), is decoded and re-encoded like an avatar, and only the result is
   * stored. CONFLICT when the workspace has the name already.
   */
  async create(
    actor: Actor,
    input: { serverId: string; name: unknown; contentType: unknown; image: unknown },
  ): Promise<CustomEmojiView> {
    this.assertEnabled();
    const accountId = actingAccountId(actor);
    const workspaceId = input.serverId;
    refuseDirectSpace(workspaceId);
    const name = checkEmojiName(input.name);
    if (typeof input.contentType !== 'string') throw validation('contentType must be a string');
    const bytes = decodeImage(input.image);
    await this.deps.authz.assertCan(actor, 'emoji:manage', { workspaceId });
    if (await findCustomEmoji(this.deps.db.kysely, workspaceId, name)) throw taken(name);

    const store = this.deps.files.blobs;
    let temp: Awaited<ReturnType<typeof receiveToTemp>> | null = null;
    let image;
    try {
      temp = await receiveToTemp(
        store,
        (async function* () {
          yield bytes;
        })(),
        EMOJI_MAX_BYTES,
      );
      image = await storeReencodedImage(store, temp.file, input.contentType, EMOJI_MAX_SIDE);
    } catch (err) {
      if (err instanceof UploadRefused) throw validation(`image: ${err.message}`);
      throw err;
    } finally {
      await temp?.remove();
    }

    const row = newEmojiRow(workspaceId, name, image, accountId, this.deps.clock.now().getTime());
    try {
      await this.deps.db.transaction(async (tx) => {
        await this.deps.authz.assertCan(actor, 'emoji:manage', { workspaceId, db: tx.db });
        if ((await countCustomEmoji(tx.db, workspaceId)) >= EMOJI_PER_WORKSPACE) {
          throw capExceeded(
            'custom emoji per workspace',
            'EMOJI_PER_WORKSPACE',
            EMOJI_PER_WORKSPACE,
          );
        }
        await insertCustomEmoji(tx.db, row);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw taken(name);
      throw err;
    }
    return toView(row);
  }

  /**
   * Deletes an emoji (Moderator and up); NOT_FOUND when there is none of that name. Messages and
   * reactions that use it keep their `:name:` text; its blob goes with the sweep.
   */
  async delete(actor: Actor, serverId: string, nameInput: unknown): Promise<boolean> {
    this.assertEnabled();
    refuseDirectSpace(serverId);
    const name = checkEmojiName(nameInput);
    await this.deps.authz.assertCan(actor, 'emoji:manage', { workspaceId: serverId });
    const deleted = await this.deps.db.transaction(async (tx) => {
      await this.deps.authz.assertCan(actor, 'emoji:manage', { workspaceId: serverId, db: tx.db });
      return deleteCustomEmoji(tx.db, serverId, name);
    });
    if (!deleted) throw notFound('custom emoji');
    return true;
  }

  async has(workspaceId: string, name: string): Promise<boolean> {
    return (await findCustomEmoji(this.deps.db.kysely, workspaceId, name)) !== undefined;
  }

  /**
   * Whether `GET /api/files/{path}` serves this image as an emoji's: only while the feature is
   * on (FEATURE_DISABLED otherwise, when an emoji uses it).
   */
  async isServed(path: string): Promise<boolean> {
    const used = await emojiImageInUse(this.deps.db.kysely, path);
    if (used && !featureEnabled(this.deps.config, 'custom_emoji')) this.assertEnabled();
    return used;
  }
}

/** A new emoji's row, its image stored; `createdBy` null for one imported from elsewhere. */
export function newEmojiRow(
  workspaceId: string,
  name: string,
  image: StoredImage,
  createdBy: string | null,
  createdAt: number,
): CustomEmojiTable {
  return {
    id: newId(),
    workspaceId,
    name,
    imagePath: imagePath(image),
    contentType: image.contentType,
    width: image.width,
    height: image.height,
    createdBy,
    createdAt,
  };
}

/** Checks and case-folds a name; `:name:` is taken too. */
export function checkEmojiName(input: unknown): string {
  if (typeof input !== 'string') throw validation('name must be a string');
  const shortcode = /^:(.*):$/s.exec(input);
  const name = (shortcode ? shortcode[1]! : input).toLowerCase();
  if (!EMOJI_NAME.test(name)) {
    throw validation('an emoji name is 2 to 32 of the letters a-z, digits, _, + and -');
  }
  return name;
}

function decodeImage(input: unknown): Buffer {
  if (typeof input !== 'string') throw validation('image must be a base64 string');
  if (input.length > BASE64_MAX_CHARS) {
    throw validation(`image: the file is larger than ${EMOJI_MAX_BYTES} bytes`);
  }
  if (input.length === 0) throw validation('image: the file is empty');
  if (!BASE64.test(input)) throw validation('image must be standard base64 (with padding)');
  const bytes = Buffer.from(input, 'base64');
  if (bytes.length > EMOJI_MAX_BYTES) {
    throw validation(`image: the file is larger than ${EMOJI_MAX_BYTES} bytes`);
  }
  return bytes;
}

function refuseDirectSpace(workspaceId: string): void {
  if (workspaceId === DIRECT_SPACE_ID) {
    throw new AppError('VALIDATION', 'the direct space has no custom emoji');
  }
}

const taken = (name: string) => conflict(`this workspace already has an emoji named :${name}:`);

function toView(row: CustomEmojiTable): CustomEmojiView {
  return {
    id: row.id,
    serverId: row.workspaceId,
    name: row.name,
    shortcode: `:${row.name}:`,
    url: imageUrl(row.imagePath),
    contentType: row.contentType,
    width: Number(row.width),
    height: Number(row.height),
    createdById: row.createdBy,
    createdAt: Number(row.createdAt),
  };
}
