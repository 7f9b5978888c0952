import type { Outbox } from './events/outbox.js';
import { onAccountsBlocked, type Federation } from './federation/index.js';
import type { Services } from './services/index.js';
import type { NewestPages, MessageRemover } from './services/messages/index.js';

/** What the reactions are registered on: the services and the few objects not among them. */
export interface Reacting {
  services: Services;
  /** The one removal path for messages (services/messages/removal.ts). */
  messageRemover: MessageRemover;
  /** The newest page of each conversation, kept while the server is the one process. */
  pages: NewestPages;
  outbox: Outbox;
  federation: Federation;
}

/**
 * How the areas react to each other: every cross-area registration, in one list, read as a
 * table (docs/architecture.md, "How areas react to each other"). No constructor registers
 * itself; an area exposes what it does (`onWorkspaceDeleted`, `referencedBlobs`, ...) and this
 * function says when it runs. Within one event the hooks run in the order written here.
 *
 * In the transaction of the change (a failure rolls it back): message removal, workspace
 * deletion, the account purge, a block, a device revocation. After the commit, off the request:
 * a message created or edited, a member joined, outbox rows drained. A message's search terms
 * are not a hook: the send writes them itself, on SQLite a moment after it and before any search
 * (search/held-terms.ts), so any search made after a send is acknowledged finds the message.
 */
export function wireReactions(r: Reacting): void {
  const { services: s, messageRemover, pages, outbox, federation } = r;

  // Messages removed (one message, a conversation's, a person's): rows that name them go in the
  // same transaction; blobs go with the next sweep once no row names them.
  messageRemover.onRemove((tx, removal) =>
    s.search.onMessagesRemoved(
      tx,
      removal.messages.map((m) => m.id),
    ),
  );
  messageRemover.onRemove(s.linkPreviews.onRemove);
  messageRemover.onRemove((tx, removal) => s.attachments.onMessagesRemoved(tx, removal));

  // A message created or edited, after its commit: never delays the send.
  if (s.linkPreviews.enabled) {
    s.messages.hooks.onCreated(s.linkPreviews.messageCreated);
    s.messages.hooks.onEdited(s.linkPreviews.messageEdited);
  }
  s.messages.hooks.onCreated(s.commands.messageCreated);
  s.messages.hooks.onCreated((message) => s.notifications.messageCreated(message));

  // A workspace deleted (by its owner, a purge or a cascading block): its rows in each area.
  s.workspaces.lifecycle.onDelete((tx, id) => s.emoji.onWorkspaceDeleted(tx, id));
  s.workspaces.lifecycle.onDelete((tx, id) => s.attachments.onWorkspaceDeleted(tx, id));
  s.workspaces.lifecycle.onDelete((tx, id) => s.plugins.onWorkspaceDeleted(tx, id));
  s.workspaces.lifecycle.onDelete((tx, id) => s.commands.onWorkspaceDeleted(tx, id));
  s.workspaces.lifecycle.onDelete((tx, id) => s.notifications.onWorkspaceDeleted(tx, id));

  // A member joined a workspace, after the commit: pipeline triggers.
  s.workspaces.membership.onJoined(s.commands.memberJoined);

  // An account purged: each area's rows of the person, in the purge's transaction.
  s.accountDeletion.addPurgeStep('attachments', (tx, id) => s.attachments.onAccountPurged(tx, id));
  s.accountDeletion.addPurgeStep('commands', (tx, id) => s.commands.onAccountPurged(tx, id));
  s.accountDeletion.addPurgeStep('notifications', (tx, id) =>
    s.notifications.onAccountPurged(tx, id),
  );
  s.accountDeletion.addPurgeStep('federation', (tx, id) =>
    federation.revocations.onAccountPurged(tx, id),
  );

  // Blobs still referenced: the sweep keeps a blob any of these names.
  s.files.addReferenceSource('avatars', (names) => s.avatars.referencedBlobs(names));
  s.files.addReferenceSource('custom_emoji', (names) => s.emoji.referencedBlobs(names));
  s.files.addReferenceSource('attachments', (names) => s.attachments.referencedBlobs(names));
  s.files.addReferenceSource('plugin-bundles', (names) => s.plugins.referencedBlobs(names));

  // A session started on a device (a key sign-in): the device's last use, written with the
  // session (one statement on PostgreSQL, one transaction on SQLite).
  s.sessions.onDeviceSession(s.devices.sessionUse);

  // Accounts blocked, devices revoked: the revocation goes to every host the person used (the
  // s2s outbox, in the same transaction); a remote person blocked here loses their live events.
  s.moderation.blocks.onBlocked((tx, accounts) => onAccountsBlocked(federation, tx, accounts));
  s.devices.onRevoked((tx, revoked) =>
    federation.revocations.queueRevocation(tx, revoked.accountId, revoked.username, [
      revoked.deviceKey,
    ]),
  );

  // Outbox rows another process (the command line, a crashed server) left, drained here: the
  // newest pages may be stale.
  outbox.onDrained(() => pages.forgetAll());
}
