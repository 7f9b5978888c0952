import { useState } from 'preact/hooks';

import { ARCHIVE_CHANNEL, RENAME_CHANNEL, UNARCHIVE_CHANNEL } from '../../api/admin-queries.ts';
import { gql } from '../../api/graphql.ts';
import { SET_TOPIC } from '../../api/queries.ts';
import type { Conversation } from '../../api/types.ts';
import { conversations, patchConversation, workspaces } from '../../state/store.ts';
import { Dialog } from '../dialog.tsx';
import { ErrorText, showInfo } from '../toasts.tsx';

/** A channel's name and topic (its members, the owner, Moderators) and archiving (staff). */
export function ChannelSettings(p: { conversationId: string; onClose: () => void }) {
  const c = conversations.value[p.conversationId];
  const [error, setError] = useState<unknown>(null);
  if (!c) return null;
  const role = workspaces.value.find((w) => w.id === c.serverId)?.myRole;
  const staff = role === 'OWNER' || role === 'MODERATOR';
  return (
    <Dialog title={`#${c.name ?? ''}`} onClose={p.onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          const name = String(f.get('name')).trim();
          const topic = String(f.get('topic') ?? '').trim();
          const steps: Promise<unknown>[] = [];
          if (name !== c.name) {
            steps.push(
              gql<{ renameChannel: { name: string } }>(RENAME_CHANNEL, { id: c.id, name }).then(
                (d) => patchConversation(c.id, { name: d.renameChannel.name }),
              ),
            );
          }
          if (topic !== (c.topic ?? '')) {
            steps.push(
              gql<{ setChannelTopic: Conversation }>(SET_TOPIC, {
                id: c.id,
                topic: topic || null,
              }).then((d) => patchConversation(c.id, { topic: d.setChannelTopic.topic })),
            );
          }
          Promise.all(steps)
            .then(() => {
              showInfo('Saved.');
              p.onClose();
            })
            .catch(setError);
        }}
      >
        <label>
          Name
          <input name="name" required maxLength={80} defaultValue={c.name ?? ''} />
        </label>
        <label>
          Topic
          <input name="topic" maxLength={250} defaultValue={c.topic ?? ''} dir="auto" />
        </label>
        <ErrorText error={error} />
        <button type="submit" class="primary">
          Save
        </button>
      </form>
      {staff && (
        <p>
          <button
            type="button"
            onClick={() =>
              gql(c.archived ? UNARCHIVE_CHANNEL : ARCHIVE_CHANNEL, { id: c.id })
                .then(() => {
                  patchConversation(c.id, { archived: !c.archived });
                  p.onClose();
                })
                .catch(setError)
            }
          >
            {c.archived ? 'Unarchive the channel' : 'Archive the channel (read only)'}
          </button>
        </p>
      )}
    </Dialog>
  );
}
