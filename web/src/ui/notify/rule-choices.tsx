import type { NotificationLevel } from '../../api/types.ts';

// The choices a notification rule offers, shared by a conversation's dialog and the settings'
// workspace rules (docs/notifications.md, "Levels and rules").

export const LEVEL_WORDS: Record<NotificationLevel, string> = {
  ALL: 'Every message',
  MENTIONS: 'Mentions, keywords and replies to my threads',
  NOTHING: 'Nothing',
};

/** Mute lengths, in minutes; "until I unmute" is ten years (the API takes a time). */
export const MUTE_CHOICES: [string, number][] = [
  ['For 1 hour', 60],
  ['For 8 hours', 8 * 60],
  ['For 1 day', 24 * 60],
  ['For 1 week', 7 * 24 * 60],
  ['Until I unmute', 10 * 365 * 24 * 60],
];

const FOR_GOOD_MS = 5 * 365 * 24 * 3600 * 1000;

export function muteUntil(minutes: number): string {
  return new Date(Date.now() + minutes * 60_000).toISOString();
}

/** "Muted until 14:00 tomorrow", "Muted until you unmute", or null when not muted now. */
export function mutedWords(until: string | null | undefined): string | null {
  if (!until) return null;
  const t = new Date(until).getTime();
  if (!(t > Date.now())) return null;
  return t - Date.now() > FOR_GOOD_MS
    ? 'Muted until you unmute'
    : `Muted until ${new Date(t).toLocaleString()}`;
}

/** A level select: the wider scope's level (empty value) or one of the three. */
export function LevelSelect(p: {
  id: string;
  value: NotificationLevel | null;
  inherited: string;
  onChange: (level: NotificationLevel | null) => void;
  disabled?: boolean;
}) {
  return (
    <select
      id={p.id}
      value={p.value ?? ''}
      disabled={p.disabled}
      onChange={(e) => p.onChange((e.currentTarget.value || null) as NotificationLevel | null)}
    >
      <option value="">{p.inherited}</option>
      {(Object.keys(LEVEL_WORDS) as NotificationLevel[]).map((l) => (
        <option key={l} value={l}>
          {LEVEL_WORDS[l]}
        </option>
      ))}
    </select>
  );
}
