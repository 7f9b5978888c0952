import { createHmac, timingSafeEqual } from 'node:crypto';

// Message franking (docs/e2ee.md, "Franking"). The sender commits to the plaintext with a fresh
// random opening key; the server binds that commitment to the message's sender, conversation and
// time with its franking key; a recipient who reports the message reveals plaintext and opening,
// and the server recomputes both values.

/** Bytes of a commitment and of an opening key. */
export const FRANKING_BYTES = 32;

const COMMIT_LABEL = 'svc-franking-commitment-v1';
const TAG_LABEL = 'svc-franking-tag-v1';

/** The sender's commitment: HMAC-SHA256 keyed by the opening over conversation and plaintext. */
export function frankingCommitment(
  opening: Buffer,
  conversationId: string,
  plaintext: Buffer,
): Buffer {
  return createHmac('sha256', opening)
    .update(`${COMMIT_LABEL}\0${conversationId}\0`)
    .update(plaintext)
    .digest();
}

/** What the server binds at receipt. */
export interface FrankedFields {
  messageId: string;
  conversationId: string;
  authorId: string;
  createdAt: number;
  commitment: Buffer;
}

/** The server's tag: HMAC-SHA256 under the franking key over the message's fields. */
export function frankingTag(key: Buffer, f: FrankedFields): Buffer {
  return createHmac('sha256', key)
    .update(`${TAG_LABEL}\0${f.messageId}\0${f.conversationId}\0${f.authorId}\0${f.createdAt}\0`)
    .update(f.commitment)
    .digest();
}

export const sameBytes = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

/** What a recipient reveals when reporting an encrypted message. */
export interface FrankingReveal {
  /** The message body as decrypted (after the opening key), UTF-8. */
  plaintext: string;
  /** The opening key, base64url (32 bytes). */
  opening: string;
}

/** The franked fields of a stored encrypted message (mls_message with its message row). */
export interface StoredFranking {
  messageId: string;
  conversationId: string;
  authorId: string;
  createdAt: number;
  frankingCommitment: string;
  frankingTag: string;
}

/**
 * Checks a reveal against a stored message: the server's tag must still bind the stored
 * commitment to the message's sender, conversation and time (the row was not altered), and the
 * revealed opening and plaintext must open the commitment. True only when both hold.
 */
export function verifyReveal(key: Buffer, stored: StoredFranking, reveal: FrankingReveal): boolean {
  const commitment = Buffer.from(stored.frankingCommitment, 'base64url');
  const tag = frankingTag(key, {
    messageId: stored.messageId,
    conversationId: stored.conversationId,
    authorId: stored.authorId,
    createdAt: stored.createdAt,
    commitment,
  });
  if (!sameBytes(tag, Buffer.from(stored.frankingTag, 'base64url'))) return false;
  const opening = Buffer.from(reveal.opening, 'base64url');
  if (opening.length !== FRANKING_BYTES) return false;
  const opened = frankingCommitment(
    opening,
    stored.conversationId,
    Buffer.from(reveal.plaintext, 'utf8'),
  );
  return sameBytes(opened, commitment);
}
