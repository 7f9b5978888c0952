// The requests the page sends the MLS worker (./mls-worker.ts) and what each answers.

export type MlsRequest =
  | { op: 'init'; deviceId: string; identity: string }
  | { op: 'makePackages'; n: number; lastResort: boolean }
  | { op: 'group'; conversationId: string }
  /** Drops what the worker holds of a group: another tab may have moved it on since. */
  | { op: 'forget'; conversationId: string }
  | { op: 'createGroup'; conversationId: string; incarnation: number }
  | {
      op: 'prepareCommit';
      conversationId: string;
      add: string[];
      removeDeviceIds: string[];
      members?: string[];
    }
  | { op: 'confirmCommit'; conversationId: string }
  | { op: 'dropGroup'; conversationId: string }
  | { op: 'discardCommit'; conversationId: string }
  | { op: 'setMembers'; conversationId: string; members: string[] }
  | {
      op: 'join';
      conversationId: string;
      welcomes: { incarnation: number; welcome: string }[];
      members: string[];
    }
  | {
      op: 'applyCommit';
      conversationId: string;
      incarnation: number;
      epoch: number;
      commit: string;
    }
  | { op: 'encrypt'; conversationId: string; body: string }
  | { op: 'remember'; messageId: string; body: string; opening: string }
  | { op: 'read'; messageIds: string[] }
  | {
      op: 'decrypt';
      conversationId: string;
      messageId: string;
      ciphertext: string;
      frankingCommitment: string;
      incarnation: number;
      epoch: number;
      /** The device the server says sent it (the author's): the MLS sender must be it. */
      senderDeviceId: string | null;
    };

export interface GroupInfo {
  incarnation: number;
  epoch: number;
  joinedEpoch: number;
  members: string[];
  deviceIds: string[];
}

export interface PreparedCommit {
  incarnation: number;
  epoch: number;
  commit: string;
  welcome: string | null;
}

export interface Encrypted {
  incarnation: number;
  epoch: number;
  ciphertext: string;
  frankingCommitment: string;
  opening: string;
}

/** Why a message cannot be read on this device. */
export type Unreadable = 'before' | 'later' | 'failed' | 'franking' | 'sender';

export type Decrypted = { body: string; opening: string } | { unreadable: Unreadable };
