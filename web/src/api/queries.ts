// The GraphQL documents of the client, named so the server's metrics count them by name.

export const USER = `id username displayName avatarUrl`;

export const ATTACHMENT = `id fileName contentType sizeBytes width height url`;

export const MESSAGE = `id conversationId text isDeleted createdAt editedAt threadRootId
  replyCount lastReplyAt pinned author { ${USER} }
  reactions { emoji count reactedByMe }
  mentions { userIds channelIds here }
  linkPreviews { url title description imageUrl siteName }
  attachments { ${ATTACHMENT} }
  ciphertext mls { incarnation epoch senderDeviceId frankingCommitment }`;

export const CONVERSATION = `id serverId kind name topic isPrivate encrypted archived memberIds
  pendingMemberIds memberCount isMember unreadCount mentionCount lastActivityAt dmRequest { id state }
  notificationRule { level mutedUntil }`;

export const WORKSPACE = `id name description isDirect ownerId myRole myTimedOutUntil memberCount`;

export const SERVER_INFO = `query ServerInfo { serverInfo {
  version apiVersion instanceNotice termsUrl signupRequiresKeys openRegistration
  registrationPowBits features { key state reason } limits { messageBytes } } }`;

export const ME = `query Me { me { ${USER} email instanceOperator deletionScheduledFor probationEndsAt } }`;

export const SESSION = `user { ${USER} } csrfToken expiresAt serverId`;

export const LOGIN = `mutation Login($input: LoginInput!) { login(input: $input) { ${SESSION} } }`;
export const LOGOUT = `mutation Logout { logout }`;
export const KEY_CHALLENGE = `mutation KeyLoginChallenge { keyLoginChallenge { challengeId nonce expiresAt serverKey } }`;
export const LOGIN_WITH_KEY = `mutation LoginWithKey($proof: KeyLoginProof!) { loginWithKey(proof: $proof) { ${SESSION} } }`;
export const SIGNUP_WITH_KEY = `mutation SignupWithKey($input: SignupWithKeyInput!) { signupWithKey(input: $input) { ${SESSION} } }`;
export const SIGNUP_WITH_INVITE = `mutation SignupWithInvite($input: SignupWithInviteInput!) { signupWithInvite(input: $input) { ${SESSION} } }`;
export const REGISTRATION_CHALLENGE = `query RegistrationChallenge { registrationChallenge { challengeId salt bits expiresAt } }`;
export const SEND_LINK_OFFER = `mutation SendDeviceLinkOffer($input: SendDeviceLinkOfferInput!) {
  sendDeviceLinkOffer(input: $input) { offerId code offerSecret expiresAt } }`;
export const LINK_OFFER_STATUS = `query DeviceLinkOfferStatus($id: ID!, $secret: String!) {
  deviceLinkOfferStatus(offerId: $id, offerSecret: $secret) }`;
export const REQUEST_PASSWORD_RESET = `mutation RequestPasswordReset($input: RequestPasswordResetInput!) { requestPasswordReset(input: $input) }`;
export const RESET_PASSWORD = `mutation ResetPassword($input: ResetPasswordInput!) { resetPassword(input: $input) }`;

/** Workspaces come a page at a time, the direct space first (docs/api.md, Pagination). */
export const MY_WORKSPACES = `query MyWorkspaces($after: String, $limit: Int) {
  myWorkspaces(after: $after, limit: $limit) { ${WORKSPACE} cursor } }`;
/** Channels come a page at a time, oldest first (docs/api.md, Pagination). */
export const CHANNEL_PAGE = 100;
export const WORKSPACE_CHANNELS = `query WorkspaceChannels($serverId: ID!, $after: String, $limit: Int) {
  channels(serverId: $serverId, after: $after, limit: $limit) { ${CONVERSATION} cursor } }`;
export const INBOX = `query Inbox($after: String) { inboxConversations(after: $after, limit: 100) {
  items { ${CONVERSATION} members { ${USER} } } hasMore nextCursor } }`;
export const CONVERSATION_Q = `query Conversation($id: ID!) { conversation(id: $id) {
  ${CONVERSATION} members { ${USER} } } }`;
/** A conversation's members, a page at a time in the order they joined (docs/api.md). */
export const CONVERSATION_MEMBERS = `query ConversationMembers($id: ID!, $after: String, $limit: Int) {
  conversation(id: $id) { id members(after: $after, limit: $limit) { ${USER} cursor } } }`;
export const CREATE_WORKSPACE = `mutation CreateWorkspace($input: CreateWorkspaceInput!) {
  createWorkspace(input: $input) { ${WORKSPACE} } }`;
export const JOIN_WORKSPACE = `mutation JoinWorkspace($token: String!) { joinWorkspace(token: $token) { ${WORKSPACE} } }`;
export const LEAVE_WORKSPACE = `mutation LeaveWorkspace($serverId: ID!) { leaveWorkspace(serverId: $serverId) }`;
export const CREATE_CHANNEL = `mutation CreateChannel($input: CreateChannelInput!) { createChannel(input: $input) { ${CONVERSATION} } }`;
export const JOIN_CHANNEL = `mutation JoinChannel($id: ID!) { joinChannel(conversationId: $id) { ${CONVERSATION} } }`;
export const LEAVE_CHANNEL = `mutation LeaveChannel($id: ID!) { leaveChannel(conversationId: $id) }`;
export const SET_TOPIC = `mutation SetChannelTopic($id: ID!, $topic: String) { setChannelTopic(conversationId: $id, topic: $topic) { ${CONVERSATION} } }`;
export const CREATE_CONVERSATION = `mutation CreateConversation($input: CreateConversationInput!) {
  createConversation(input: $input) { conversation { ${CONVERSATION} members { ${USER} } } reused
  dmRequestsSent { id } } }`;
export const LEAVE_CONVERSATION = `mutation LeaveConversation($id: ID!) { leaveConversation(conversationId: $id) }`;

export const MESSAGES = `query Messages($id: ID!, $before: String, $after: String, $limit: Int) {
  messages(conversationId: $id, before: $before, after: $after, limit: $limit) {
  items { ${MESSAGE} } hasMore nextCursor prevCursor } }`;
export const THREAD = `query ThreadReplies($id: ID!, $before: String, $after: String) {
  threadReplies(messageId: $id, before: $before, after: $after, limit: 50) {
  items { ${MESSAGE} } hasMore nextCursor prevCursor } }`;
export const PINNED = `query PinnedMessages($id: ID!) { pinnedMessages(conversationId: $id) { ${MESSAGE} } }`;
export const SEND = `mutation SendMessage($input: SendMessageInput!) { sendMessage(input: $input) { ${MESSAGE} } }`;
export const EDIT = `mutation EditMessage($id: ID!, $text: String!) { editMessage(messageId: $id, text: $text) { ${MESSAGE} } }`;
export const DELETE = `mutation DeleteMessage($id: ID!) { deleteMessage(messageId: $id) { ${MESSAGE} } }`;
export const REACT = `mutation AddReaction($id: ID!, $emoji: String!) { addReaction(messageId: $id, emoji: $emoji) { ${MESSAGE} } }`;
export const UNREACT = `mutation RemoveReaction($id: ID!, $emoji: String!) { removeReaction(messageId: $id, emoji: $emoji) { ${MESSAGE} } }`;
export const PIN = `mutation PinMessage($id: ID!) { pinMessage(messageId: $id) { ${MESSAGE} } }`;
export const UNPIN = `mutation UnpinMessage($id: ID!) { unpinMessage(messageId: $id) { ${MESSAGE} } }`;
export const MARK_READ = `mutation MarkRead($id: ID!, $messageId: ID!) { markRead(conversationId: $id, messageId: $messageId) { id unreadCount } }`;
export const REPORT_MESSAGE = `mutation ReportMessage($id: ID!, $category: ReportCategory!, $text: String,
  $reveal: FrankingRevealInput) {
  reportMessage(messageId: $id, category: $category, text: $text, reveal: $reveal) {
    id snapshot { frankingVerified } } }`;

export const START_TYPING = `mutation StartTyping($id: ID!) { startTyping(conversationId: $id) }`;
export const PRESENCE = `query Presence($ids: [ID!]!) { presence(userIds: $ids) { userId status } }`;
export const SET_PRESENCE = `mutation SetPresence($choice: PresenceChoice!) { setPresence(choice: $choice) { choice status } }`;

export const DM_REQUESTS = `query DmRequests { dmRequests { id conversationId state createdAt
  from { ${USER} } to { ${USER} } preview { ${MESSAGE} } } }`;
export const ACCEPT_DM = `mutation AcceptDmRequest($id: ID!) { acceptDmRequest(requestId: $id) { ${CONVERSATION} } }`;
export const DECLINE_DM = `mutation DeclineDmRequest($id: ID!) { declineDmRequest(requestId: $id) }`;
export const BLOCK_USER = `mutation BlockUser($id: ID!) { blockUser(userId: $id) }`;

export const MEMBERS = `query WorkspaceMembers($serverId: ID!, $after: String) { workspace(serverId: $serverId) {
  members(after: $after, limit: 200) { items { user { ${USER} } role joinedAt timedOutUntil } nextCursor } } }`;

export const CREATE_ATTACHMENT = `mutation CreateAttachment($input: CreateAttachmentInput!) {
  createAttachment(input: $input) { attachmentId uploadToken } }`;
export const FINALIZE_ATTACHMENT = `mutation FinalizeAttachment($input: FinalizeAttachmentInput!) {
  finalizeAttachment(input: $input) { id } }`;
/** The newest messages' attachments: finalizing publishes no event, so readers look again. */
export const CUSTOM_EMOJI = `id name shortcode url width height`;
export const CUSTOM_EMOJIS = `query CustomEmojis($serverId: ID!, $after: String, $limit: Int) {
  customEmojis(serverId: $serverId, after: $after, limit: $limit) { ${CUSTOM_EMOJI} cursor } }`;
export const CREATE_CUSTOM_EMOJI = `mutation CreateCustomEmoji($input: CreateCustomEmojiInput!) {
  createCustomEmoji(input: $input) { ${CUSTOM_EMOJI} } }`;
export const DELETE_CUSTOM_EMOJI = `mutation DeleteCustomEmoji($serverId: ID!, $name: String!) {
  deleteCustomEmoji(serverId: $serverId, name: $name) }`;

export const SEARCH_MESSAGES = `query SearchMessages($query: String!, $filter: MessageSearchFilter, $order: SearchOrder, $after: String) {
  searchMessages(query: $query, filter: $filter, order: $order, after: $after, limit: 20) {
  items { message { ${MESSAGE} } highlights { start length } joined
    excerpt { text start end highlights { start length } } } hasMore nextCursor } }`;
export const SEARCH_MEMBERS = `query SearchMembers($serverId: ID!, $query: String!) {
  searchMembers(serverId: $serverId, query: $query, limit: 8) { user { ${USER} } } }`;
export const SEARCH_CHANNELS = `query SearchChannels($serverId: ID!, $query: String!) {
  searchChannels(serverId: $serverId, query: $query, limit: 50) { ${CONVERSATION} } }`;
