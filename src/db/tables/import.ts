// Row types added by migration 0024-import-map (docs/operations.md, "Importing").

/**
 * What an import made of each item of its source: a Slack user, a Mattermost channel, a message.
 * It is what makes `svc import` idempotent and resumable: an item with a row here was imported
 * (its row commits with the item's own rows), so a second run skips it.
 */
export interface ImportMapTable {
  /** `slack` or `mattermost`. */
  source: string;
  /** `person`, `workspace`, `conversation` or `message`. */
  kind: string;
  /** The item's identity in the source (a Slack id, a Mattermost name, channel and time, ...). */
  sourceId: string;
  /** The id of the row made for it (an account, a workspace, a conversation, a message). */
  targetId: string;
}
