import { actingUser, type Actor } from '../../auth/actor.js';
import type { ConversationTable } from '../../db/tables/conversations.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type { Tx } from '../../db/transaction.js';
import { validation } from '../../errors.js';
import { ENCRYPTION_FRAMING_BYTES } from '../messages/index.js';

import { FRANKING_BYTES, frankingTag } from './franking.js';
import { commitRequired, groupIdOf, intArg, MlsPart, staleEpoch } from './mls-part.js';
import { findGroup, insertMlsMessage, mlsMessages, pendingRemovals } from './queries.js';
import { decodeBase64, readHeader } from './wire.js';

/** Encrypted messages with their franking tag (docs/e2ee.md). */
export class MlsMessages extends MlsPart {
  // ---- encrypted messages

  /**
   * Stores an MLS application message (a PrivateMessage of the group's current epoch) with the
   * sender's franking commitment, and binds the commitment to sender, conversation and time with
   * the franking key. MLS_COMMIT_REQUIRED before the group exists (`noGroup`) and while devices
   * that must leave are still in it (`pendingRemovals`); STALE_EPOCH for another epoch.
   */
  async sendEncrypted(
    actor: Actor,
    input: {
      conversationId: unknown;
      incarnation: unknown;
      epoch: unknown;
      ciphertext: unknown;
      frankingCommitment: unknown;
      threadRootId?: unknown;
    },
  ): Promise<MessageTable> {
    const user = actingUser(actor);
    const incarnation = intArg(input.incarnation, 'incarnation');
    const epoch = intArg(input.epoch, 'epoch');
    const max = this.deps.config.messageBytesMax + ENCRYPTION_FRAMING_BYTES;
    const chars = Math.ceil((max * 4) / 3) + 4;
    if (typeof input.ciphertext === 'string' && input.ciphertext.length > chars) {
      throw validation(
        `an encrypted message is at most ${max} bytes (${this.deps.config.limits.messageBytes === null ? 'the built-in 65536' : 'SVC_LIMIT_MESSAGE_BYTES'} plus ${ENCRYPTION_FRAMING_BYTES} bytes of framing)`,
      );
    }
    const bytes = decodeBase64(input.ciphertext, 'ciphertext', chars);
    const commitment = decodeBase64(input.frankingCommitment, 'frankingCommitment', 64);
    if (commitment.length !== FRANKING_BYTES) {
      throw validation(`frankingCommitment must be ${FRANKING_BYTES} bytes`);
    }
    const header = readHeader(bytes, 'the ciphertext');
    if (header.wire !== 'private' || header.contentType !== 'application') {
      throw validation('the ciphertext must be an MLS PrivateMessage with application content');
    }
    if (header.epoch !== epoch)
      throw validation('the ciphertext is for another epoch than `epoch`');
    const check = async (tx: Tx | null, conv: Pick<ConversationTable, 'id'>) => {
      const db = tx ? tx.db : this.kysely;
      // Inside the storing transaction the group is held, so no Commit moves the epoch before
      // the message is stored.
      const group = await findGroup(
        db,
        conv.id,
        tx ? { dialect: tx.dialect, mode: 'share' } : undefined,
      );
      if (!group) {
        throw commitRequired(
          'noGroup',
          'the conversation has no MLS group yet: create it with a Commit',
        );
      }
      const pending = await pendingRemovals(db, conv.id);
      if (pending.length > 0) {
        throw commitRequired(
          'pendingRemovals',
          `devices that left must be removed from the group by a Commit first: ${pending.join(', ')}`,
        );
      }
      if (group.incarnation !== incarnation || group.epoch !== epoch) {
        throw staleEpoch(group.incarnation, group.epoch);
      }
      if (!header.groupId.equals(groupIdOf(conv.id, incarnation))) {
        throw validation('the ciphertext is for another MLS group than this conversation');
      }
    };
    return this.deps.messages.sending.sendEncrypted(
      actor,
      { conversationId: input.conversationId, threadRootId: input.threadRootId },
      { text: bytes.toString('base64url'), bytes: bytes.length },
      {
        before: (conv) => check(null, conv),
        within: async (tx, message) => {
          await check(tx, { id: message.conversationId });
          const tag = frankingTag(this.deps.frankingKey, {
            messageId: message.id,
            conversationId: message.conversationId,
            authorId: message.authorId,
            createdAt: message.createdAt,
            commitment,
          });
          const mls = {
            incarnation,
            epoch,
            senderDeviceId: user.deviceId,
            frankingCommitment: commitment.toString('base64url'),
            frankingTag: tag.toString('base64url'),
          };
          await insertMlsMessage(tx.db, { messageId: message.id, ...mls });
          return { mls };
        },
      },
    );
  }

  /** The MLS fields of encrypted messages, by message id. */
  async messageInfo(messageIds: readonly string[]) {
    const rows = await mlsMessages(this.kysely, messageIds);
    return new Map(rows.map((r) => [r.messageId, r]));
  }
}
