import { MESSAGE } from '../api/queries.ts';

// The GraphQL documents of encrypted conversations.

export const DEVICE_Q = `query E2eeDevice { myDevices { id current encryptionReady keyPackagesAvailable
  keyPackagesLow } myKeyIdentity { id } }`;
export const PUBLISH = `mutation PublishKeyPackage($d: ID!, $ks: [String!], $l: String) {
  publishKeyPackage(deviceId: $d, keyPackages: $ks, lastResortKeyPackage: $l) { id keyPackagesAvailable } }`;
export const GROUP_STATE = `query MlsGroupState($c: ID!) { mlsGroupState(conversationId: $c) {
  incarnation epoch deviceIds pendingRemovalDeviceIds pendingAdditions { deviceId userId }
  orphaned } }`;
export const COMMITS = `query MlsCommits($c: ID!, $i: Int!, $e: Int!) { mlsCommits(conversationId: $c,
  incarnation: $i, fromEpoch: $e, limit: 100) { items { incarnation epoch commit } hasMore nextEpoch } }`;
export const WELCOMES = `query MlsWelcomes($c: ID) { mlsWelcomes(conversationId: $c) { incarnation welcome } }`;
export const CLAIM = `mutation ClaimKeyPackages($c: ID!, $u: ID!) { claimKeyPackages(conversationId: $c,
  userId: $u) { deviceId keyPackage } }`;
export const COMMIT = `mutation CommitMlsGroup($i: MlsCommitInput!) { commitMlsGroup(input: $i) { epoch } }`;
export const SEND_ENCRYPTED = `mutation SendEncryptedMessage($i: SendEncryptedMessageInput!) {
  sendEncryptedMessage(input: $i) { ${MESSAGE} } }`;
export const ENROLL = `mutation EnrollIdentityKey($i: EnrollIdentityKeyInput!) { enrollIdentityKey(input: $i) {
  device { id } keyIdentity { id } } }`;
