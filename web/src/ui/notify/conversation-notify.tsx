import { useState } from 'preact/hooks';

import { gql } from '../../api/graphql.ts';
import { SET_NOTIFICATION_RULE } from '../../api/notification-queries.ts';
import type { Conversation, NotificationLevel, NotificationRule } from '../../api/types.ts';
import { patchConversation, titleOf } from '../../state/store.ts';
import { Dialog } from '../dialog.tsx';
import { ErrorText, showInfo } from '../toasts.tsx';

import { LevelSelect, MUTE_CHOICES, muteUntil, mutedWords } from './rule-choices.tsx';

/**
 * A conversation's notification rule: its level (or the workspace's / the person's default) and
 * a mute for a while. Saved with `setNotificationRule` as soon as it changes.
 */
export default function ConversationNotify(p: { c: Conversation; onClose: () => void }) {
  const { c } = p;
  const rule = c.notificationRule ?? null;
  const [error, setError] = useState<unknown>(null);
  const muted = mutedWords(rule?.mutedUntil);
  const save = (level: NotificationLevel | null, mutedUntil: string | null, done: string) =>
    gql<{ setNotificationRule: NotificationRule | null }>(SET_NOTIFICATION_RULE, {
      input: { conversationId: c.id, level, mutedUntil },
    })
      .then((d) => {
        const r = d.setNotificationRule;
        patchConversation(c.id, {
          notificationRule: r ? { level: r.level, mutedUntil: r.mutedUntil } : null,
        });
        setError(null);
        showInfo(done);
      })
      .catch(setError);
  const level = rule?.level ?? null;
  const inherited =
    c.kind === 'CHANNEL'
      ? 'As the workspace (or my default) says'
      : 'Every message (the default for direct messages)';
  return (
    <Dialog title={`Notifications for ${titleOf(c)}`} onClose={p.onClose}>
      <div class="form">
        <label for="conv-level">Notify me of</label>
        <LevelSelect
          id="conv-level"
          value={level}
          inherited={inherited}
          onChange={(l) => void save(l, rule?.mutedUntil ?? null, 'Saved.')}
        />
        <p class="hint">
          Unread counts still show; only notifications (the inbox, push and mail) follow this.
        </p>
        <fieldset>
          <legend>Mute</legend>
          {muted ? (
            <p>
              {muted}.{' '}
              <button type="button" onClick={() => void save(level, null, 'Unmuted.')}>
                Unmute
              </button>
            </p>
          ) : (
            <div class="buttons wrap">
              {MUTE_CHOICES.map(([label, minutes]) => (
                <button
                  key={label}
                  type="button"
                  onClick={() => void save(level, muteUntil(minutes), `Muted ${titleOf(c)}.`)}
                >
                  {label}
                </button>
              ))}
            </div>
          )}
        </fieldset>
        <ErrorText error={error} />
        <div class="buttons">
          <button type="button" class="primary" onClick={p.onClose}>
            Done
          </button>
        </div>
      </div>
    </Dialog>
  );
}
