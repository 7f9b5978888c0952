// What both importers read their exports into: people, workspaces, conversations and messages,
// each with the key it has in its source. The writer (writer.ts) maps these onto svc's rows.

export type SourceName = 'slack' | 'mattermost';

/** Where an item stands in the export: the file and its line (1-based). */
export interface Place {
  file: string;
  line: number;
}

/** An item that could not be read; nothing of it is imported. */
export interface Problem extends Place {
  message: string;
}

export interface SourcePerson {
  key: string;
  /** The username in the source; made to fit svc's rules when written. */
  username: string;
  displayName: string | null;
  email: string | null;
  /** Deactivated in the source: gets an account (their messages keep their author), no membership. */
  deactivated: boolean;
}

export type SourceRole = 'owner' | 'moderator' | 'member' | 'guest';

export interface SourceWorkspace {
  key: string;
  name: string;
  description: string | null;
  /** Members by person key, with their role (the first owner owns the workspace). */
  members: Map<string, SourceRole>;
  createdAt: number;
}

export interface SourceConversation {
  key: string;
  /** Null for direct and group conversations (the direct space). */
  workspaceKey: string | null;
  kind: 'channel' | 'direct' | 'group';
  name: string | null;
  topic: string | null;
  isPrivate: boolean;
  archived: boolean;
  createdBy: string | null;
  createdAt: number;
  /** Person keys. */
  members: Set<string>;
  place: Place;
}

/**
 * A file a message has: carried in the export (Mattermost's attachment paths inside its ZIP) or
 * only named by it (Slack's links).
 */
export interface FileReference {
  name: string;
  /** Where the file was (Slack's url_private) or its path in the export; null when not given. */
  location: string | null;
}

/** A custom emoji of the export: its name and where its image is in the export. */
export interface SourceEmoji {
  name: string;
  image: string;
  place: Place;
}

export interface SourceMessage {
  key: string;
  conversationKey: string;
  authorKey: string;
  text: string;
  createdAt: number;
  editedAt: number | null;
  /** The key of the thread's first message, for a reply. */
  threadKey: string | null;
  /** Emoji as the source names them (`+1`, `tada::skin-tone-2`), with who reacted. */
  reactions: { name: string; personKey: string; createdAt: number }[];
  pin: { personKey: string; at: number } | null;
  files: FileReference[];
  /** Usernames the text mentions by the source's ids (Slack `<@U123>`), already person keys. */
  mentionKeys: string[];
  place: Place;
}

/** One export, read. `messages()` gives a thread's first message before its replies. */
export interface ImportSource {
  name: SourceName;
  people: Map<string, SourcePerson>;
  workspaces: SourceWorkspace[];
  conversations: SourceConversation[];
  messages(): AsyncIterable<SourceMessage>;
  /** Custom emoji, for every workspace of the import (Mattermost's are the instance's). */
  emoji: SourceEmoji[];
  /**
   * The bytes of a file the export carries at `location` (an attachment's path, an emoji's
   * image), or null when it does not carry it.
   */
  openFile(location: string): Promise<AsyncIterable<Uint8Array> | null>;
  /** Problems found so far (reading the messages adds to them). */
  problems: Problem[];
  /** Source items left out on purpose (join notices, ...), by reason. */
  skipped: Map<string, number>;
  close(): Promise<void>;
}

export function countSkip(skipped: Map<string, number>, reason: string): void {
  skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
}

/** `text` cut to at most `max` code points. */
export function clip(text: string, max: number): string {
  const points = [...text];
  return points.length <= max ? text : points.slice(0, max).join('');
}
