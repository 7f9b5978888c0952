// Row types of the tables services/dm owns (db/table-owners.ts): DM settings, requests and
// blocks between people. Timestamps in ms.

export interface DmSettingsTable {
  accountId: string;
  inbound: string;
  outbound: string;
  partners: string;
}

export interface DmRequestTable {
  id: string;
  fromId: string;
  toId: string;
  conversationId: string;
  state: 'pending' | 'accepted' | 'declined';
  createdAt: number;
  respondedAt: number | null;
}

export interface UserBlockTable {
  blockerId: string;
  blockedId: string;
  createdAt: number;
}
