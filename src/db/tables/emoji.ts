// Row types of custom emoji (services/emoji).

export interface CustomEmojiTable {
  id: string;
  workspaceId: string;
  /** Case-folded, 2 to 32 of `a-z 0-9 _ + -`; used as `:name:`. */
  name: string;
  /** `avatars/<sha256>.<ext>`: the re-encoded image, served under /api/files/. */
  imagePath: string;
  contentType: string;
  width: number;
  height: number;
  /** The account that added it (null once not known). */
  createdBy: string | null;
  createdAt: number;
}
