import { actingUser, type Actor } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import {
  AVATAR_MAX_SIDE,
  imagePath,
  imagePathsOf,
  imageUrl,
  namesOfImagePaths,
  storeReencodedImage,
  type FileStorage,
} from '../files/index.js';

import { assertLocalAccount } from './local-account.js';
import { avatarPathInUse, avatarPathsAmong, setAvatarPath } from './queries.js';
import type { AccountViewCache } from './view-cache.js';

/** Contract (Other constants): the largest avatar upload. */
export const AVATAR_MAX_BYTES = 2 * 1024 * 1024;

/** What `POST /api/files/avatar` answers. */
export interface AvatarAnswer {
  path: string;
  size_bytes: number;
  url: string;
}

/**
 * Avatars (docs/files.md, "Avatars"): an uploaded image is decoded and re-encoded, only the
 * result is stored in the blob store, and the account names it by path
 * (`avatars/<sha256>.<ext>`). The previous avatar's blob is left to the sweep, which asks this
 * area which names accounts still hold; the purge's tombstone clears the path.
 */
export class Avatars {
  constructor(
    private readonly db: Db,
    private readonly files: FileStorage,
    private readonly views: AccountViewCache,
  ) {}

  /** The blob names among `names` that accounts still hold as avatars (a blob reference source). */
  async referencedBlobs(names: string[]): Promise<string[]> {
    return namesOfImagePaths(await avatarPathsAmong(this.db.kysely, imagePathsOf(names)));
  }

  /**
   * Makes the image in `file` (an upload's temporary file) the caller's avatar. 415 for a type
   * other than PNG, JPEG, GIF or WebP or bytes of another format, 400 for bytes that do not
   * decode (UploadRefused).
   */
  async set(actor: Actor, file: string, declaredType: string): Promise<AvatarAnswer> {
    const session = actingUser(actor);
    assertLocalAccount(session);
    const image = await storeReencodedImage(this.files.blobs, file, declaredType, AVATAR_MAX_SIDE);
    const path = imagePath(image);
    await setAvatarPath(this.db.kysely, session.accountId, path);
    this.views.changed(session.accountId);
    return { path, size_bytes: image.sizeBytes, url: imageUrl(path) };
  }

  /** Whether a live account shows this avatar path (a parsed `avatars/...` path). */
  isServed(path: string): Promise<boolean> {
    return avatarPathInUse(this.db.kysely, path);
  }
}

/** The URL of an account's avatar, or null. */
export function avatarUrlOf(avatarPath: string | null): string | null {
  return avatarPath === null ? null : imageUrl(avatarPath);
}
