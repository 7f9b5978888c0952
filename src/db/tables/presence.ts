// Row types of presence. What a user chose to show; connections and activity are not stored.

export interface PresenceSettingTable {
  accountId: string;
  /** `auto` (online while connected, away when idle), `away`, or `invisible` (shown offline). */
  choice: string;
  updatedAt: number;
}
