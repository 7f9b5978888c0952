// Documents of the moderation and administration screens (loaded with those screens).
import { USER, WORKSPACE } from './queries.ts';

export const SET_ROLE = `mutation SetMemberRole($input: SetMemberRoleInput!) { setMemberRole(input: $input) { role } }`;
export const TIMEOUT = `mutation TimeoutMember($serverId: ID!, $userId: ID!, $minutes: Int!) {
  timeoutMember(serverId: $serverId, userId: $userId, minutes: $minutes) { timedOutUntil } }`;
export const CLEAR_TIMEOUT = `mutation ClearTimeout($serverId: ID!, $userId: ID!) {
  clearTimeout(serverId: $serverId, userId: $userId) { timedOutUntil } }`;
export const REMOVE_MEMBER = `mutation RemoveWorkspaceMember($serverId: ID!, $userId: ID!) {
  removeWorkspaceMember(serverId: $serverId, userId: $userId) }`;
export const INVITES = `query WorkspaceInvites($serverId: ID!, $after: String, $limit: Int) {
  workspaceInvites(serverId: $serverId, after: $after, limit: $limit) {
  id role createdAt expiresAt maxUses uses email state cursor } }`;
export const CREATE_INVITE = `mutation CreateWorkspaceInvite($input: CreateWorkspaceInviteInput!) {
  createWorkspaceInvite(input: $input) { link token mailed invite { id } } }`;
export const REVOKE_INVITE = `mutation RevokeWorkspaceInvite($id: ID!) { revokeWorkspaceInvite(inviteId: $id) { id state } }`;
export const REPORT_FIELDS = `id cursor subjectKind subjectId category text createdAt resolved resolvedAt
  subjectUsername reporterUsername serverId
  snapshot { text encrypted frankingVerified authorId authorUsername userId username
    workspaceName messageCreatedAt }`;
export const WORKSPACE_REPORTS = `query WorkspaceReports($serverId: ID!, $openOnly: Boolean, $after: String, $limit: Int) {
  workspaceReports(serverId: $serverId, openOnly: $openOnly, after: $after, limit: $limit) { ${REPORT_FIELDS} } }`;
export const RESOLVE_WORKSPACE_REPORT = `mutation ResolveWorkspaceReport($id: ID!) { resolveWorkspaceReport(id: $id) { id resolved } }`;
export const UPDATE_WORKSPACE = `mutation UpdateWorkspace($input: UpdateWorkspaceInput!) { updateWorkspace(input: $input) { ${WORKSPACE} } }`;
export const TRANSFER_WORKSPACE = `mutation TransferWorkspaceOwnership($input: TransferWorkspaceOwnershipInput!) {
  transferWorkspaceOwnership(input: $input) { ${WORKSPACE} } }`;
export const ARCHIVE_CHANNEL = `mutation ArchiveChannel($id: ID!) { archiveChannel(conversationId: $id) { id archived } }`;
export const UNARCHIVE_CHANNEL = `mutation UnarchiveChannel($id: ID!) { unarchiveChannel(conversationId: $id) { id archived } }`;
export const RENAME_CHANNEL = `mutation RenameChannel($id: ID!, $name: String!) { renameChannel(conversationId: $id, name: $name) { id name } }`;
export const DELETE_WORKSPACE = `mutation DeleteWorkspace($input: DeleteWorkspaceInput!) { deleteWorkspace(input: $input) { deleted } }`;

export const INSTANCE_REPORTS = `query InstanceReports($openOnly: Boolean, $after: String) {
  instanceReports(openOnly: $openOnly, after: $after, limit: 500) { ${REPORT_FIELDS} } }`;
export const INSTANCE_RESOLVE = `mutation InstanceResolveReport($id: ID!) { instanceResolveReport(id: $id) { id resolved } }`;
export const PRINCIPAL_BLOCKS = `query InstancePrincipalBlocks { instancePrincipalBlocks {
  principalId kind reason cascade createdAt createdBy username } }`;
export const BLOCK_PRINCIPAL = `mutation InstanceBlockPrincipal($id: String!, $reason: String, $cascade: Boolean) {
  instanceBlockPrincipal(principalId: $id, reason: $reason, cascade: $cascade) {
  sessionsEnded messagesRemoved workspacesDeleted block { principalId } } }`;
export const UNBLOCK_PRINCIPAL = `mutation InstanceUnblockPrincipal($id: String!) { instanceUnblockPrincipal(principalId: $id) { principalId } }`;
export const IP_BLOCKS = `query InstanceIpBlocks { instanceIpBlocks { cidr reason createdAt expiresAt createdBy } }`;
export const BLOCK_IP = `mutation InstanceBlockIp($cidr: String!, $reason: String, $days: Int) {
  instanceBlockIp(cidr: $cidr, reason: $reason, expiresInDays: $days) { cidr } }`;
export const UNBLOCK_IP = `mutation InstanceUnblockIp($cidr: String!) { instanceUnblockIp(cidr: $cidr) { cidr } }`;
export const AUDIT_LOG = `query InstanceAuditLog($before: String) { instanceAuditLog(before: $before, limit: 200) {
  entries { id kind action actorId target reason details createdAt } nextCursor } }`;
export const INSTANCE_INVITES = `query InstanceInvites { instanceInvites { id email createdAt expiresAt maxUses uses revokedAt } }`;
export const CREATE_INSTANCE_INVITE = `mutation CreateInstanceInvite($email: String, $days: Int, $uses: Int) {
  createInstanceInvite(email: $email, expiresInDays: $days, maxUses: $uses) { token invite { id } } }`;

export const MY_SESSIONS = `query MySessions($after: String, $limit: Int) { mySessions(after: $after, limit: $limit) {
  id deviceId createdAt expiresAt ip userAgent current cursor } }`;
export const REVOKE_SESSION = `mutation RevokeSession($id: ID!) { revokeSession(id: $id) }`;
export const LOGOUT_OTHERS = `mutation LogoutOtherSessions { logoutOtherSessions }`;
export const MY_DEVICES = `query MyDevices { myDevices { id name publicKey createdAt lastUsedAt current encryptionReady }
  deviceLinkOffers { id deviceName devicePublicKey createdAt expiresAt } myKeyIdentity { id publicKey } }`;
export const REVOKE_DEVICE = `mutation RevokeDevice($id: ID!) { revokeDevice(deviceId: $id) }`;
export const APPROVE_LINK = `mutation ApproveDeviceLink($input: ApproveDeviceLinkInput!) { approveDeviceLink(input: $input) { id } }`;
export const UPDATE_PROFILE = `mutation UpdateProfile($input: UpdateProfileInput!) { updateProfile(input: $input) { ${USER} } }`;
export const CHANGE_PASSWORD = `mutation ChangePassword($input: ChangePasswordInput!) { changePassword(input: $input) }`;
export const DM_SETTINGS = `query MyDmSettings { myDmSettings { inbound outbound partners
  outsideFloorFrom { setting excludedChoices message } } myPresence { choice status } }`;
export const BLOCKED_USERS = `query BlockedUsers($after: String, $limit: Int) {
  blockedUsers(after: $after, limit: $limit) { ${USER} cursor } }`;
export const UPDATE_DM_SETTINGS = `mutation UpdateDmSettings($input: UpdateDmSettingsInput!) { updateDmSettings(input: $input) { inbound outbound partners } }`;
export const UNBLOCK_USER = `mutation UnblockUser($id: ID!) { unblockUser(userId: $id) }`;
export const REQUEST_DELETION = `mutation RequestAccountDeletion($input: RequestAccountDeletionInput!) {
  requestAccountDeletion(input: $input) { scheduledFor } }`;
export const CANCEL_DELETION = `mutation CancelAccountDeletion { cancelAccountDeletion }`;

const DATA_EXPORT_FIELDS = 'id state requestedAt readyAt expiresAt sizeBytes downloadUrl error';
export const MY_DATA_EXPORTS = `query MyDataExports { myDataExports { ${DATA_EXPORT_FIELDS} } }`;
export const REQUEST_DATA_EXPORT = `mutation RequestDataExport { requestDataExport { ${DATA_EXPORT_FIELDS} } }`;
