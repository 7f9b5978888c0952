import { useEffect, useState } from 'preact/hooks';

import { gql } from '../../api/graphql.ts';
import {
  NOTIFICATION_SETTINGS,
  SET_NOTIFICATION_RULE,
  UPDATE_NOTIFICATION_SETTINGS,
} from '../../api/notification-queries.ts';
import type {
  NotificationLevel,
  NotificationSettings as Settings,
  Workspace,
} from '../../api/types.ts';
import { featureOn, workspaces } from '../../state/store.ts';
import { PushOffer } from '../notify/push-offer.tsx';
import {
  LEVEL_WORDS,
  LevelSelect,
  MUTE_CHOICES,
  muteUntil,
  mutedWords,
} from '../notify/rule-choices.tsx';
import { ErrorText, showInfo } from '../toasts.tsx';

/**
 * Settings → Notifications: push on this browser, the default level, keywords, do not disturb
 * and quiet hours, the mail digest, and a rule per workspace (docs/notifications.md).
 */
export function NotificationSettings() {
  const [s, setS] = useState<Settings | null>(null);
  const [error, setError] = useState<unknown>(null);
  const reload = () =>
    gql<{ notificationSettings: Settings }>(NOTIFICATION_SETTINGS)
      .then((d) => setS(d.notificationSettings))
      .catch(setError);
  useEffect(() => {
    void reload();
  }, []);
  if (!s) return error ? <ErrorText error={error} /> : <p class="loading">Loading…</p>;
  const update = (input: Partial<Settings>, done = 'Saved.') =>
    gql<{ updateNotificationSettings: Settings }>(UPDATE_NOTIFICATION_SETTINGS, { input })
      .then((d) => {
        setS(d.updateNotificationSettings);
        setError(null);
        showInfo(done);
      })
      .catch(setError);
  const dnd = mutedWords(s.doNotDisturbUntil)?.replace('Muted', 'Paused');
  return (
    <>
      <h2>Notifications</h2>
      <ErrorText error={error} />
      <fieldset>
        <legend>On this browser</legend>
        <PushOffer />
      </fieldset>
      <fieldset>
        <legend>In channels, notify me of</legend>
        {(Object.keys(LEVEL_WORDS) as NotificationLevel[]).map((l) => (
          <label class="check" key={l}>
            <input
              type="radio"
              name="level"
              checked={s.level === l}
              onChange={() => void update({ level: l })}
            />
            <span>{LEVEL_WORDS[l]}</span>
          </label>
        ))}
        <p class="hint">
          Direct and group messages notify of every message unless you choose Nothing.
        </p>
      </fieldset>
      <Keywords keywords={s.keywords} save={(keywords) => update({ keywords })} />
      <fieldset>
        <legend>Do not disturb</legend>
        {dnd ? (
          <p>
            {dnd}.{' '}
            <button
              type="button"
              onClick={() => void update({ doNotDisturbUntil: null }, 'Resumed.')}
            >
              Resume now
            </button>
          </p>
        ) : (
          <div class="buttons wrap">
            {MUTE_CHOICES.slice(0, 3).map(([label, minutes]) => (
              <button
                key={label}
                type="button"
                onClick={() => void update({ doNotDisturbUntil: muteUntil(minutes) }, 'Paused.')}
              >
                Pause {label.toLowerCase()}
              </button>
            ))}
          </div>
        )}
        <p class="hint">
          While paused, and in your quiet hours, nothing is pushed or mailed; the inbox still fills.
        </p>
        <QuietHours s={s} save={(input) => update(input)} />
      </fieldset>
      <fieldset>
        <legend>Mail</legend>
        <label class="check">
          <input
            type="checkbox"
            checked={s.emailDigests}
            onChange={(e) => void update({ emailDigests: e.currentTarget.checked })}
          />
          <span>Mail me a digest of what I missed while away</span>
        </label>
        {!featureOn('email') && (
          <p class="hint">This server sends no mail now, so no digest goes out either way.</p>
        )}
      </fieldset>
      <WorkspaceRules s={s} onSaved={() => void reload().then(() => showInfo('Saved.'))} />
    </>
  );
}

function Keywords(p: { keywords: string[]; save: (k: string[]) => Promise<unknown> }) {
  const [text, setText] = useState(p.keywords.join(', '));
  useEffect(() => setText(p.keywords.join(', ')), [p.keywords.join(',')]);
  return (
    <form
      class="form"
      onSubmit={(e) => {
        e.preventDefault();
        void p.save(
          text
            .split(',')
            .map((k) => k.trim())
            .filter(Boolean),
        );
      }}
    >
      <label for="keywords">Keywords</label>
      <input
        id="keywords"
        value={text}
        aria-describedby="keywords-hint"
        onInput={(e) => setText(e.currentTarget.value)}
      />
      <p class="hint" id="keywords-hint">
        Words that notify you like a mention in channels, separated by commas (whole words, any
        case; at most 25).
      </p>
      <div class="buttons">
        <button type="submit">Save keywords</button>
      </div>
    </form>
  );
}

function QuietHours(p: { s: Settings; save: (input: Partial<Settings>) => Promise<unknown> }) {
  const [start, setStart] = useState(p.s.quietHoursStart ?? '');
  const [end, setEnd] = useState(p.s.quietHoursEnd ?? '');
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  return (
    <form
      class="form quiet-hours"
      onSubmit={(e) => {
        e.preventDefault();
        const on = start && end;
        void p.save({
          quietHoursStart: on ? start : null,
          quietHoursEnd: on ? end : null,
          timeZone: zone,
        });
      }}
    >
      <label for="quiet-start">Quiet hours from</label>
      <input
        id="quiet-start"
        type="time"
        value={start}
        onInput={(e) => setStart(e.currentTarget.value)}
      />
      <label for="quiet-end">to</label>
      <input
        id="quiet-end"
        type="time"
        value={end}
        onInput={(e) => setEnd(e.currentTarget.value)}
      />
      <p class="hint">Every day, in {zone}. Leave both empty for none.</p>
      <div class="buttons">
        <button type="submit">Save quiet hours</button>
      </div>
    </form>
  );
}

function WorkspaceRules(p: { s: Settings; onSaved: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const list = workspaces.value.filter((w) => !w.isDirect);
  if (!list.length) return null;
  const ruleOf = (w: Workspace) =>
    p.s.rules.find((r) => r.serverId === w.id && r.conversationId === null);
  const save = (w: Workspace, level: NotificationLevel | null, mutedUntil: string | null) =>
    gql(SET_NOTIFICATION_RULE, { input: { serverId: w.id, level, mutedUntil } })
      .then(p.onSaved)
      .catch(setError);
  return (
    <fieldset>
      <legend>Workspaces</legend>
      <p class="hint">
        A workspace's rule comes before your channel level; a channel's own rule (its bell) comes
        first.
      </p>
      <ErrorText error={error} />
      <ul class="plain rule-list">
        {list.map((w) => {
          const r = ruleOf(w);
          const muted = mutedWords(r?.mutedUntil);
          return (
            <li key={w.id}>
              <label for={`ws-level-${w.id}`} dir="auto">
                {w.name}
              </label>
              <LevelSelect
                id={`ws-level-${w.id}`}
                value={r?.level ?? null}
                inherited={`My channel level (${LEVEL_WORDS[p.s.level].toLowerCase()})`}
                onChange={(l) => void save(w, l, r?.mutedUntil ?? null)}
              />
              {muted ? (
                <button type="button" onClick={() => void save(w, r?.level ?? null, null)}>
                  Unmute {w.name} ({muted.toLowerCase()})
                </button>
              ) : (
                <button
                  type="button"
                  onClick={() => void save(w, r?.level ?? null, muteUntil(MUTE_CHOICES[4]![1]))}
                >
                  Mute {w.name}
                </button>
              )}
            </li>
          );
        })}
      </ul>
    </fieldset>
  );
}
