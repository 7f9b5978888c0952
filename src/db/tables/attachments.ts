// Row types of attachments (src/services/attachments/). Timestamps in ms.

export interface AttachmentTable {
  id: string;
  conversationId: string;
  /** The conversation's workspace (the direct space for direct and group conversations). */
  workspaceId: string;
  /** The account that created it; only it may upload, finalize and delete. */
  uploaderId: string;
  /** The name the uploader gave, shown and used in Content-Disposition. */
  fileName: string;
  /** The type declared at creation, then the type the bytes were checked against. */
  contentType: string | null;
  /** SHA-256 (base64url) of the single-use upload token. */
  uploadTokenHash: string;
  /** After this the upload token is refused. */
  uploadExpiresAt: number;
  /** Set by the upload: the blob (sha256 hex), its size and, for an image, its pixels. */
  sha256: string | null;
  sizeBytes: number | null;
  width: number | null;
  height: number | null;
  uploadedAt: number | null;
  /** The message it is attached to; null until finalized (unfinalized rows expire). */
  messageId: string | null;
  finalizedAt: number | null;
  createdAt: number;
}
