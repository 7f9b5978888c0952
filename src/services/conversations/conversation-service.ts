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
 * One object for the edges, built from parts along the area's seams: `creating.ts` (start,
 * reuse, add people), `invitations.ts` (accept, decline, leave) and `reading.ts` (one
 * conversation, the inbox, a page's fields).
 */
export class ConversationService {
  readonly create: ConversationCreation['create'];
  readonly addMembers: ConversationCreation['addMembers'];
  readonly acceptInvite: ConversationInvitations['acceptInvite'];
  readonly declineInvite: ConversationInvitations['declineInvite'];
  readonly leave: ConversationInvitations['leave'];
  readonly purgeExpiredInvites: ConversationInvitations['purgeExpiredInvites'];
  readonly get: ConversationReading['get'];
  readonly inbox: ConversationReading['inbox'];
  readonly membersOf: ConversationReading['membersOf'];
  readonly unreadCounts: ConversationReading['unreadCounts'];
  readonly lastMessages: ConversationReading['lastMessages'];
  readonly dmRequestsFor: ConversationReading['dmRequestsFor'];
  readonly standing: ConversationReading['standing'];
  readonly mlsGroup: ConversationReading['mlsGroup'];
  readonly ownOpenRequest: ConversationReading['ownOpenRequest'];

  constructor(deps: ConversationServiceDeps) {
    const creation = new ConversationCreation(deps);
    const invitations = new ConversationInvitations(deps);
    const reading = new ConversationReading(deps);
    this.create = creation.create.bind(creation);
    this.addMembers = creation.addMembers.bind(creation);
    this.acceptInvite = invitations.acceptInvite.bind(invitations);
    this.declineInvite = invitations.declineInvite.bind(invitations);
    this.leave = invitations.leave.bind(invitations);
    this.purgeExpiredInvites = invitations.purgeExpiredInvites.bind(invitations);
    this.get = reading.get.bind(reading);
    this.inbox = reading.inbox.bind(reading);
    this.membersOf = reading.membersOf.bind(reading);
    this.unreadCounts = reading.unreadCounts.bind(reading);
    this.lastMessages = reading.lastMessages.bind(reading);
    this.dmRequestsFor = reading.dmRequestsFor.bind(reading);
    this.standing = reading.standing.bind(reading);
    this.mlsGroup = reading.mlsGroup.bind(reading);
    this.ownOpenRequest = reading.ownOpenRequest.bind(reading);
  }
}
