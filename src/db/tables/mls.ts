// Row types of the MLS delivery service (migration 0019-mls; docs/e2ee.md). Timestamps in ms;
// booleans 0/1; binary values base64url.

/** A KeyPackage a device published; single-use unless it is the device's last-resort one. */
export interface MlsKeyPackageTable {
  id: string;
  deviceId: string;
  accountId: string;
  /** The MLSMessage (wire format mls_key_package). */
  keyPackage: string;
  /** SHA-256 of the package's bytes. */
  hash: string;
  /** The KeyPackageRef (RFC 9420, 5.2), by which a Welcome names the package. */
  ref: string;
  lastResort: number;
  /** The package's own lifetime end (not_after). */
  expiresAt: number;
  createdAt: number;
  claimedAt: number | null;
  claimedBy: string | null;
}

/** The MLS group of an encrypted conversation. */
export interface MlsGroupTable {
  conversationId: string;
  /** 1 for the conversation's first group. */
  incarnation: number;
  /** The group's current epoch. */
  epoch: number;
  createdAt: number;
  updatedAt: number;
}

/** A Commit the server accepted; `epoch` is the epoch it was made in. */
export interface MlsCommitTable {
  conversationId: string;
  incarnation: number;
  epoch: number;
  /** The MLSMessage carrying the Commit. */
  commit: string;
  senderId: string;
  senderDeviceId: string | null;
  createdAt: number;
}

/** A Welcome for one device that a Commit added; `epoch` is the epoch it joins at. */
export interface MlsWelcomeTable {
  id: string;
  conversationId: string;
  deviceId: string;
  incarnation: number;
  epoch: number;
  welcome: string;
  createdAt: number;
}

/** A device in a conversation's group, as the Commits that added it declared. */
export interface MlsGroupDeviceTable {
  conversationId: string;
  deviceId: string;
  accountId: string;
  addedAt: number;
}

/** What the server keeps of an encrypted message besides its ciphertext (franking). */
export interface MlsMessageTable {
  messageId: string;
  incarnation: number;
  epoch: number;
  senderDeviceId: string | null;
  frankingCommitment: string;
  frankingTag: string;
}
