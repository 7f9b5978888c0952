import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type { Tx } from '../../db/transaction.js';
import type { EventPort } from '../../events/port.js';
import { userTopic, workspaceTopic } from '../../events/catalog.js';
import { emit } from '../../events/publish.js';
import { findPresenceAudience } from '../presence/index.js';

/**
 * Announces a changed display name (`AccountUpdated`) to everyone who sees the account, once
 * `tx` commits: on the topic of each workspace it is a member of, and on the own topics of the
 * people it shares a direct or group conversation with and its own (the audience presence
 * uses), so open pages show the new name on the person's next message without a reload.
 */
export async function announceProfile(
  tx: Tx,
  events: EventPort,
  now: Date,
  accountId: string,
  displayName: string | null,
): Promise<void> {
  const { workspaceIds, partners } = await findPresenceAudience(tx.db, accountId);
  const at = now.getTime();
  const fields = { userId: accountId, displayName };
  for (const serverId of workspaceIds) {
    emit(tx, events, workspaceTopic(serverId), 'AccountUpdated', at, {
      audience: { kind: 'workspace' },
      serverId,
      ...fields,
    });
  }
  for (const id of new Set([accountId, ...partners])) {
    emit(tx, events, userTopic(id), 'AccountUpdated', at, {
      audience: { kind: 'users', userIds: [id] },
      serverId: DIRECT_SPACE_ID,
      ...fields,
    });
  }
}
