// The conversations area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export {
  assertReadable,
  assertWritableBy,
  canRead,
  plausibleId,
  readFactsFrom,
  readFactsOf,
} from './access.js';
export type { Access, ReadFacts } from './access.js';
export {
  addConversationMembers,
  countChannels,
  existingConversationMembers,
  findChannel,
  findChannelByName,
  findChannelsIn,
  findConversationMember,
  insertChannel,
  listOpenPublicChannelIds,
  listVisibleChannels,
  updateChannel,
} from './channel-queries.js';
export { ConversationService } from './conversation-service.js';
export type {
  DirectConversation,
  DirectMessaging,
  DmRequestView,
  Person,
  Reach,
} from './dm-port.js';
export { emitConversationEvent, emitToUsers, eventsToUsers } from './events.js';
export type { MemberListRow } from './member-lists.js';
export { cursorOf, parsePageArgs } from './paging.js';
export type { Page, PageArgs } from './paging.js';
export {
  PREFETCHED_ACCESS,
  PrefetchedAccess,
  conversationNamed,
  prefetchedAccessOf,
} from './prefetched-access.js';
// Reads.
export {
  ACCESS_COLUMNS,
  conversationAccess,
  findAccounts,
  findConversation,
  findConversationAccess,
  findDirectPair,
  lastMessages,
  membersOf,
  membershipsAmong,
  sharingAWorkspace,
  sharingWith,
} from './queries.js';
// Writes, in the caller's transaction or statement.
export {
  advanceReadMarkerStatement,
  claimDirectPair,
  deferAdvanceReadMarker,
  deferTouchConversation,
  deleteConversationMember,
  deleteConversationMembershipsOf,
  deleteMembershipsInWorkspace,
  insertConversation,
  insertMembers,
  touchConversation,
} from './queries.js';
export type { ConversationAccessRow } from './queries.js';
export { toRow } from './rows.js';
export { isPrivateConversation, toConversationView } from './views.js';
export type { ConversationView } from './views.js';
