import type { ConversationServiceDeps } from './conversation-part.js';
import {
  ConversationCreation,
  GROUP_NAME_MAX,
  MAX_GROUP_MEMBERS,
  type CreateConversationResult,
} from './creating.js';
import { ConversationInvitations } from './invitations.js';
import { ConversationReading } from './reading.js';
import { toRow } from './rows.js';

export { GROUP_NAME_MAX, MAX_GROUP_MEMBERS, toRow };
export type { ConversationServiceDeps, CreateConversationResult };

/**
 * Direct and group conversations of the direct space, invitations to encrypted conversations,
 * and the inbox (docs/direct-messages.md). Channels are created by the channels area; their
 * reading and writing rules are shared through `access.ts`.
 *
 * Its parts, along the area's seams, are its surface (as the command system's and moderation's
 * are): `creation` (`creating.ts`: start, reuse, add people), `invitations` (`invitations.ts`:
 * accept, decline, leave) and `reading` (`reading.ts`: one conversation, the inbox, a page's
 * fields).
 */
export class ConversationService {
  /** Start, reuse, add people. */
  readonly creation: ConversationCreation;
  /** Accept, decline, leave; expired invitations purged. */
  readonly invitations: ConversationInvitations;
  /** One conversation, the inbox, a page's fields. */
  readonly reading: ConversationReading;

  constructor(deps: ConversationServiceDeps) {
    this.creation = new ConversationCreation(deps);
    this.invitations = new ConversationInvitations(deps);
    this.reading = new ConversationReading(deps);
  }
}
